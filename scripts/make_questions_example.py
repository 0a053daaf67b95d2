#!/usr/bin/env python3
"""Writes public/examples/questions.json: the studio's example data for extractive question
answering, written for this project. Short passages about invented towns, each with questions
whose answers are spans of the passage (who founded it, when, on which river, what it is known
for, how many people live there, what its people eat...), and about one question in eight that
the passage does not answer (SQuAD 2.0's "no answer"). SQuAD JSON, version v2.0, with character
answer starts. Seeded, so the file is the same every run; standard library only.

    python3 scripts/make_questions_example.py
"""
import json
import os
import random

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "public", "examples", "questions.json")

TOWNS = ["Altmoor", "Brennwick", "Calder Bay", "Dunmere", "Elsford", "Farrowgate", "Glenholt", "Harwick", "Ivybridge",
         "Jorvale", "Kestrel Point", "Lindenfeld", "Marrowby", "Northwold", "Oakhaven", "Pellston", "Quarrington",
         "Redmarsh", "Stonebury", "Thistledown", "Umberlee", "Valemont", "Westerholm", "Yarrowdale", "Zennor Cove",
         "Ashcombe", "Birchfield", "Copperwell", "Driftmoor", "Eastbrook", "Fernhill", "Goldhaven", "Hollowmere",
         "Ironbridge", "Juniper Falls", "Kingsreach", "Larkspur", "Millbrook", "Nettlebed", "Orchard Vale"]
FOUNDERS = [("Maria Lopez", "a shipbuilder"), ("Tom Becker", "a miller"), ("Aiko Tanaka", "a potter"),
            ("Samuel Okafor", "a merchant"), ("Lena Novak", "a blacksmith"), ("Ravi Patel", "a weaver"),
            ("Sofia Rossi", "a fisherman's daughter"), ("Jonas Berg", "a monk"), ("Amara Diallo", "a trader"),
            ("Elena Petrova", "a baker"), ("David Cohen", "a doctor"), ("Grace Kim", "a teacher"),
            ("Omar Haddad", "a stonemason"), ("Ingrid Larsen", "a farmer"), ("Pedro Alves", "a sailor")]
RIVERS = ["Avon", "Tamar", "Wend", "Silver", "Kell", "Orrin", "Blackwater", "Lune", "Derwen", "Mire"]
REGIONS = ["the northern hills", "the eastern plains", "the southern coast", "the western valleys", "the lake district"]
KNOWN_FOR = ["its cheese market", "a glass bridge", "the oldest library in the region", "its spring flower festival",
             "red clay pottery", "a lighthouse painted with stripes", "wooden boats", "its salt mines",
             "a famous choir", "apple cider", "a giant clock tower", "its hot springs"]
FOODS = ["smoked trout", "barley bread", "plum dumplings", "lentil soup", "honey cakes", "roast chestnuts",
         "goat cheese pies", "pickled herring"]


def passage(rng, town):
    founder, job = rng.choice(FOUNDERS)
    river = rng.choice(RIVERS)
    region = rng.choice(REGIONS)
    year = str(rng.randint(1100, 1890))
    people = f"{rng.randint(2, 95)},{rng.randint(0, 999):03d}"
    known = rng.choice(KNOWN_FOR)
    food = rng.choice(FOODS)
    facts = {
        "founder": founder, "job": job, "river": river, "region": region, "year": year, "people": people,
        "known": known, "food": food,
    }
    first = rng.choice([
        f"{town} is a town on the {river} river in {region}.",
        f"On the banks of the {river}, in {region}, lies the town of {town}.",
        f"{town} sits where the {river} river leaves {region}.",
    ])
    founded = rng.choice([
        f"It was founded in {year} by {founder}, {job}.",
        f"{founder}, {job}, founded it in {year}.",
        f"The town was built in {year}, when {founder}, {job}, settled there.",
    ])
    size = rng.choice([
        f"Today about {people} people live there.",
        f"Its population is about {people}.",
        f"Some {people} people call it home.",
    ])
    fame = rng.choice([
        f"Visitors come for {known}.",
        f"It is best known for {known}.",
        f"The town is famous for {known}.",
    ])
    dish = rng.choice([
        f"The local dish is {food}.",
        f"People there like to eat {food}.",
        f"Every market day the stalls sell {food}.",
    ])
    middle = [size, fame, dish]
    rng.shuffle(middle)
    return " ".join([first, founded] + middle), facts


QUESTIONS = {
    "founder": ["Who founded {town}?", "Who built {town}?", "Which person founded the town of {town}?"],
    "year": ["When was {town} founded?", "In what year was {town} built?", "When did {town} begin?"],
    "river": ["Which river is {town} on?", "On what river does {town} lie?", "What river runs by {town}?"],
    "people": ["How many people live in {town}?", "What is the population of {town}?"],
    "known": ["What is {town} known for?", "Why do visitors come to {town}?"],
    "food": ["What is the local dish of {town}?", "What do people in {town} eat?"],
    "job": ["What was the founder of {town}?", "What did the founder of {town} do for a living?"],
}
UNANSWERABLE = ["Who is the mayor of {town}?", "How tall is the tower of {town}?", "What is the school of {town} called?",
                "When did the railway reach {town}?", "Which team plays in {town}?"]


def main():
    rng = random.Random(20261125)
    data = []
    n = 0
    for town in TOWNS:
        paragraphs = []
        for _ in range(2):
            context, facts = passage(rng, town)
            qas = []
            for kind in rng.sample(list(QUESTIONS), 4):
                answer = facts[kind]
                start = context.index(answer)
                n += 1
                qas.append({"id": f"q{n:04d}", "question": rng.choice(QUESTIONS[kind]).format(town=town),
                            "answers": [{"text": answer, "answer_start": start}], "is_impossible": False})
            if rng.random() < 0.55:
                n += 1
                qas.append({"id": f"q{n:04d}", "question": rng.choice(UNANSWERABLE).format(town=town),
                            "answers": [], "is_impossible": True})
            paragraphs.append({"context": context, "qas": qas})
        data.append({"title": town, "paragraphs": paragraphs})
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump({"version": "v2.0", "data": data}, f, ensure_ascii=False, indent=1)
    print(f"wrote {OUT}: {sum(len(p['qas']) for a in data for p in a['paragraphs'])} questions over {len(data) * 2} passages")


if __name__ == "__main__":
    main()
