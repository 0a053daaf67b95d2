#!/usr/bin/env python3
"""Writes public/examples/topics.csv: short everyday texts, each about one, two or none of five
topics (food, travel, sport, weather, money), as one 0/1 column per topic: the multi-label
classifier's built-in example, in the layout of Kaggle's toxic-comment files.

    python3 scripts/make_topics_example.py > public/examples/topics.csv

Each text joins one or two clauses, each about one topic (or about none: "I called my sister"),
so a text has every topic of its clauses. Seeded, so the file is the same on every run. Written
for bertbench; no text is taken from an existing dataset.
"""
import csv
import random
import sys

TOPICS = ["food", "travel", "sport", "weather", "money"]

CLAUSES = {
    "food": [
        "the soup was far too salty", "we baked bread with the children", "the pizza arrived cold",
        "she cooked a lovely curry", "the cake had too much sugar", "we ate pasta by the window",
        "the apples from the market were sweet", "he burnt the rice again", "the cheese smelled strong",
        "breakfast was eggs on toast", "the chef added fresh herbs", "we shared a bowl of noodles",
    ],
    "travel": [
        "the train to the coast was late", "our flight was cancelled", "we missed the last bus home",
        "the hotel room faced the harbour", "the ferry crossing took three hours", "we packed the car at dawn",
        "the taxi driver got lost", "my passport had expired", "we walked across the old bridge to the station",
        "the tram was full of tourists", "the road trip took all week", "we booked a cabin by the lake",
    ],
    "sport": [
        "our team won the match", "she ran her first marathon", "the referee sent off two players",
        "he scored in the final minute", "the tennis final went to five sets", "we cycled up the steep hill",
        "the swimming race was close", "the coach changed the whole defence", "they lost the cup on penalties",
        "I joined the climbing club", "the goalkeeper saved everything", "the basketball game went into overtime",
    ],
    "weather": [
        "it rained all afternoon", "the snow closed the schools", "a storm blew the fence down",
        "the heat was hard to bear", "fog covered the valley", "the wind was icy",
        "the sun finally came out", "hail fell for ten minutes", "the river flooded after the rain",
        "it was the coldest morning of the year", "thunder kept us awake", "a warm breeze came off the sea",
    ],
    "money": [
        "the rent went up again", "I paid off the loan", "the bank charged a fee",
        "prices in the shop have doubled", "she saved for a year", "the bill was much higher than expected",
        "my salary arrived late", "we split the cost four ways", "the tickets cost a fortune",
        "he lost his wallet", "the shares fell sharply", "we asked for a refund",
    ],
    None: [
        "I called my sister", "the cat slept on the sofa", "we painted the kitchen",
        "my phone needs a new screen", "the library was quiet", "he read a long novel",
        "the neighbours have a new dog", "I fixed the broken chair", "the children drew pictures",
        "she learned to play the piano", "we watched an old film", "the garden needs weeding",
    ],
}

JOINS = [" and ", ", but ", ", so ", " while ", "; "]


def main():
    rng = random.Random(7)
    rows = []
    keys = list(CLAUSES)
    # One clause alone (each topic, and none), two clauses of two topics, a topic and none.
    plans = [[k] for k in keys for _ in range(8)]
    plans += [[a, b] for i, a in enumerate(TOPICS) for b in TOPICS[i + 1:] for _ in range(14)]
    plans += [[a, None] for a in TOPICS for _ in range(6)]
    seen = set()
    for plan in plans:
        # Every text once: a text in both the training and the validation split says nothing.
        while True:
            clauses = [rng.choice(CLAUSES[k]) for k in plan]
            rng.shuffle(clauses)
            text = clauses[0] + (rng.choice(JOINS) + clauses[1] if len(clauses) > 1 else "")
            text = text[0].upper() + text[1:] + "."
            if text not in seen:
                break
        seen.add(text)
        rows.append([text] + [int(t in plan) for t in TOPICS])
    rng.shuffle(rows)
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["text"] + TOPICS)
    out.writerows(rows)


if __name__ == "__main__":
    main()
