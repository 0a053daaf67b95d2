#!/usr/bin/env python3
"""Writes public/examples/entities.conll: the studio's example data for token tagging, written
for this project. Sentences in the style of news briefs with people (PER), places (LOC),
organisations (ORG) and other names (MISC: nationalities, events, works, products), in CoNLL
columns (word and BIO tag per line, a blank line between sentences). Seeded, so the file is the
same every run; standard library only.

    python3 scripts/make_entities_example.py
"""
import os
import random

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "public", "examples", "entities.conll")

PEOPLE = ["Maria Lopez", "Tom Becker", "Aiko Tanaka", "Samuel Okafor", "Lena Novak", "Ravi Patel", "Chen Wei",
          "Sofia Rossi", "Jonas Berg", "Amara Diallo", "Elena Petrova", "David Cohen", "Grace Kim", "Omar Haddad",
          "Ingrid Larsen", "Pedro Alves", "Hannah Weiss", "Kofi Mensah", "Yuki Sato", "Anna Schmidt", "Mateo Garcia",
          "Fatima Zahra", "Liam Murphy", "Nora Lindqvist", "Ahmed Karim", "Julia Costa", "Marek Kowalski", "Priya Nair",
          "Lucas Martin", "Eva Horvat", "Obama", "Merkel", "Dr. Jane Foster", "Ms. Clara Moreau", "Mr. Ben Walsh"]
PLACES = ["Paris", "Lagos", "Tokyo", "Berlin", "Buenos Aires", "Oslo", "Nairobi", "Lisbon", "Seoul", "Toronto",
          "New York", "Cape Town", "Vienna", "Mumbai", "Lima", "Warsaw", "Cairo", "Dublin", "Kyoto", "Sydney",
          "the Alps", "the Nile", "Lake Victoria", "Scotland", "Brazil", "Kenya", "Canada", "India", "Norway", "Peru",
          "Rio de Janeiro", "San Francisco", "the Sahara", "Mount Fuji", "Bavaria"]
ORGS = ["the United Nations", "Greenpeace", "Siemens", "the World Health Organization", "Toyota", "UNESCO",
        "the Red Cross", "Nokia", "the European Central Bank", "Oxford University", "NASA", "FIFA", "Airbus",
        "the Bank of Japan", "Reuters", "Spotify", "the Boston Symphony Orchestra", "Ajax", "Real Madrid",
        "Médecins Sans Frontières", "Tata Motors", "the Nobel Committee", "Interpol", "IKEA", "Samsung"]
MISC = ["French", "Nigerian", "Japanese", "German", "Brazilian", "Norwegian", "Kenyan", "Olympic Games",
        "World Cup", "Nobel Prize", "Tour de France", "Oscar", "Eurovision", "Android", "Harry Potter",
        "Ninth Symphony", "Euro", "Christmas", "Ramadan", "Spanish", "Italian", "Korean", "Boeing 787",
        "Grammy", "Champions League"]

# Templates: {PER}, {LOC}, {ORG}, {MISC} are filled; every other word is O.
TEMPLATES = [
    "{PER} arrived in {LOC} on Monday .",
    "{ORG} opened a new office in {LOC} .",
    "{PER} , who works for {ORG} , spoke to reporters in {LOC} .",
    "The {MISC} team beat {ORG} 2 - 1 in {LOC} .",
    "{PER} won the {MISC} last year .",
    "Officials from {ORG} met {PER} in {LOC} on Friday .",
    "{PER} said the talks in {LOC} went well .",
    "Shares of {ORG} rose after the report .",
    "The {MISC} will be held in {LOC} next summer .",
    "{PER} and {PER} flew from {LOC} to {LOC} .",
    "A spokesman for {ORG} declined to comment .",
    "{PER} is the new head of {ORG} .",
    "Heavy rain hit {LOC} and {LOC} overnight .",
    "{ORG} and {ORG} signed a deal worth millions .",
    "The {MISC} film was shown in {LOC} .",
    "{PER} told {ORG} that prices would fall .",
    "Thousands gathered in {LOC} to celebrate {MISC} .",
    "{PER} left {ORG} after ten years .",
    "Police in {LOC} arrested two men on Tuesday .",
    "The report by {ORG} was published in {LOC} .",
    "{PER} scored twice for {ORG} .",
    "Tourists from {LOC} visited {LOC} in record numbers .",
    "{PER} wrote a book about {LOC} .",
    "{ORG} said it would hire 500 people in {LOC} .",
    "The {MISC} minister met {PER} in {LOC} .",
    "Prices rose in {LOC} for the third month .",
    "{PER} thanked {PER} for the {MISC} .",
    "The meeting was cancelled , {ORG} said .",
    "Flights between {LOC} and {LOC} resumed on Sunday .",
    "{PER} , a {MISC} writer , lives in {LOC} .",
    "It was a quiet day .",
    "Nobody expected the result .",
    "The river flooded the old town .",
    "{ORG} launched a {MISC} phone in {LOC} .",
    "{PER} will visit {LOC} and meet {ORG} staff .",
    "Fans of {ORG} waited outside the stadium in {LOC} .",
]


def fill(template, rng):
    words, tags = [], []
    for token in template.split():
        if token.startswith("{") and token.endswith("}"):
            kind = token[1:-1]
            name = rng.choice({"PER": PEOPLE, "LOC": PLACES, "ORG": ORGS, "MISC": MISC}[kind])
            parts = name.split()
            # "the" before a place or an organisation is not part of its name.
            if parts[0] == "the":
                words.append("the")
                tags.append("O")
                parts = parts[1:]
            # A title is not part of a person's name.
            if parts[0] in ("Dr.", "Ms.", "Mr."):
                words.append(parts[0])
                tags.append("O")
                parts = parts[1:]
            for i, p in enumerate(parts):
                words.append(p)
                tags.append(("B-" if i == 0 else "I-") + kind)
        else:
            words.append(token)
            tags.append("O")
    # Sentence-initial "the" is capitalised.
    if words[0] == "the":
        words[0] = "The"
    return words, tags


def main():
    rng = random.Random(2024)
    lines = []
    for n in range(360):
        words, tags = fill(TEMPLATES[n % len(TEMPLATES)] if n < len(TEMPLATES) else rng.choice(TEMPLATES), rng)
        lines.extend(f"{w}\t{t}" for w, t in zip(words, tags))
        lines.append("")
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    print(f"wrote {OUT}: 360 sentences")


if __name__ == "__main__":
    main()
