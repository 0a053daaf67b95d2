#!/usr/bin/env python3
"""Writes public/examples/corpus.txt: the MLM lab's built-in corpus.

Simple English sentences, one per line, in short "stories" (consecutive lines about the same
subject, so next-sentence and sentence-order prediction have something to learn). Facts are
consistent across the corpus (a cow always says moo, bananas are always yellow, the sun rises
in the morning), so a tiny BERT can learn to fill them in within minutes. Written for this
project; deterministic (seeded), so the file only changes when this script does.

    python3 scripts/make_mlm_corpus.py
"""
import random
from pathlib import Path

ANIMALS = {
    # animal: (sound, home, food, moves)
    "dog": ("barks", "kennel", "bones", "runs"),
    "cat": ("meows", "house", "fish", "sleeps"),
    "cow": ("moos", "barn", "grass", "walks"),
    "duck": ("quacks", "pond", "bread", "swims"),
    "horse": ("neighs", "stable", "hay", "gallops"),
    "sheep": ("bleats", "field", "grass", "grazes"),
    "bird": ("sings", "nest", "seeds", "flies"),
    "frog": ("croaks", "pond", "flies", "jumps"),
    "lion": ("roars", "savanna", "meat", "hunts"),
    "owl": ("hoots", "tree", "mice", "flies"),
    "pig": ("oinks", "sty", "apples", "rolls"),
    "bee": ("buzzes", "hive", "nectar", "flies"),
}
FRUITS = {
    "banana": "yellow", "lemon": "yellow", "apple": "red", "cherry": "red", "strawberry": "red",
    "orange": "orange", "grape": "purple", "plum": "purple", "lime": "green", "pear": "green",
    "blueberry": "blue", "coconut": "brown",
}
TIMES = [
    ("morning", "the sun rises", "we eat breakfast"),
    ("noon", "the sun is high", "we eat lunch"),
    ("evening", "the sun sets", "we eat dinner"),
    ("night", "the moon shines", "we go to sleep"),
]
SEASONS = {
    "winter": ("cold", "snow", "coats"),
    "spring": ("mild", "rain", "boots"),
    "summer": ("hot", "sunshine", "hats"),
    "autumn": ("cool", "wind", "scarves"),
}
NAMES = ["anna", "ben", "clara", "david", "emma", "felix", "grace", "henry", "iris", "jack", "lena", "max", "nora", "oscar", "rosa", "sam"]
JOBS = {
    "baker": ("bakes bread", "bakery"), "doctor": ("helps sick people", "hospital"),
    "teacher": ("teaches children", "school"), "farmer": ("grows food", "farm"),
    "pilot": ("flies planes", "airport"), "chef": ("cooks meals", "kitchen"),
    "driver": ("drives a bus", "road"), "painter": ("paints pictures", "studio"),
}
NUMBERS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]


def animal_story(rng):
    a = rng.choice(list(ANIMALS))
    sound, home, food, moves = ANIMALS[a]
    lines = [
        f"the {a} {sound}.",
        f"the {a} lives in the {home}.",
        f"the {a} likes to eat {food}.",
        f"every day the {a} {moves}.",
    ]
    return lines[: rng.randint(2, 4)]


def fruit_story(rng):
    name = rng.choice(NAMES)
    f1, f2 = rng.sample(list(FRUITS), 2)
    return [
        f"{name} went to the market.",
        f"{name} bought a {f1} and a {f2}.",
        f"the {f1} is {FRUITS[f1]}.",
        f"the {f2} is {FRUITS[f2]}.",
    ][: rng.randint(3, 4)]


def time_story(rng):
    start = rng.randrange(len(TIMES))
    out = []
    for k in range(rng.randint(2, 4)):
        when, sky, meal = TIMES[(start + k) % len(TIMES)]
        out.append(f"in the {when} {sky}.")
        out.append(f"in the {when} {meal}.")
    return out


def season_story(rng):
    s = rng.choice(list(SEASONS))
    weather, sky, clothes = SEASONS[s]
    return [f"in {s} it is {weather}.", f"in {s} we see a lot of {sky}.", f"in {s} people wear {clothes}."]


def job_story(rng):
    name = rng.choice(NAMES)
    job = rng.choice(list(JOBS))
    does, place = JOBS[job]
    return [f"{name} is a {job}.", f"a {job} {does}.", f"{name} works at the {place}."]


def count_story(rng):
    i = rng.randrange(len(NUMBERS) - 2)
    return [f"{NUMBERS[i]}, {NUMBERS[i + 1]}, {NUMBERS[i + 2]}.", f"after {NUMBERS[i + 1]} comes {NUMBERS[i + 2]}."]


def main():
    rng = random.Random(2026)
    makers = [animal_story, animal_story, fruit_story, time_story, season_story, job_story, count_story]
    lines = []
    while len(lines) < 3000:
        lines.extend(rng.choice(makers)(rng))
    out = Path(__file__).resolve().parent.parent / "public" / "examples" / "corpus.txt"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines)} lines, {sum(len(l.split()) for l in lines)} words to {out}")


if __name__ == "__main__":
    main()
