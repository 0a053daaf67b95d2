#!/usr/bin/env python3
"""Writes the studio's example data for sentence similarity, written for this project (no pair is
taken from STS-B, SICK or any other dataset):

- public/examples/similarity.csv: about 400 sentence pairs (columns sentence1, sentence2, score)
  scored on the STS scale 0-5. Built from hand-written everyday events (someone doing something
  somewhere, sometimes at some time), each with two or three hand-written paraphrases, and
  systematic variations that give each grade of the STS rubric: 5 another wording of the same
  event (verb phrase, synonym for the person, word order); 4 an unimportant detail differs (time
  of day, place left out, a detail about the person); 3 an important part differs (the object,
  tomatoes -> onions, or the person, a woman -> a man); 2 only the setting is shared (another
  event of the topic in the same place); 1 only the topic is shared; 0 another topic, no content
  word in common.
  Scores vary a little around the grade (within 0.4, so rounding gives the grade back), by the
  kind of variation and a seeded jitter. Roughly the same number of pairs for each grade.
- public/examples/similarity-texts.txt: 80 short sentences from the same events, one a line,
  to search with a query in the semantic search box.

Seeded, so the files are the same every run; standard library only.

    python3 scripts/make_similarity_example.py
"""
import csv
import os
import random
import re

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "public", "examples")
PAIRS_OUT = os.path.join(OUT_DIR, "similarity.csv")
TEXTS_OUT = os.path.join(OUT_DIR, "similarity-texts.txt")
PAIRS_PER_GRADE = 67
TEXTS = 80

# kind: (ways to say it, the same person with an unimportant detail added, kinds that are clearly
# someone else; @f and @m stand for a woman's or a man's name).
AGENTS = {
    "woman": (["a woman", "a lady"], "a woman in a blue dress", "man boy kids @m"),
    "man": (["a man", "a guy"], "a man with a beard", "woman girl kids @f"),
    "girl": (["a girl", "a young girl"], "a girl with pigtails", "boy man woman @m"),
    "boy": (["a boy", "a young boy"], "a boy in a red cap", "girl woman man @f"),
    "kids": (["two children", "two kids"], "two small children", "woman man @f @m"),
    "chef": (["a chef", "a cook"], "a chef in a white hat", "girl boy kids"),
    "waiter": (["a waiter", "a server"], "a young waiter", "girl boy kids"),
    "farmer": (["a farmer"], "an old farmer", "girl boy kids"),
    "gardener": (["a gardener"], "a gardener in rubber boots", "girl boy kids"),
    "clerk": (["an office worker", "an employee"], "a young office worker", "girl boy kids"),
    "student": (["a student", "a pupil"], "a tired student", "teacher"),
    "teacher": (["a teacher"], "a young teacher", "student kids"),
    "traveler": (["a traveler"], "a tired traveler", "girl boy kids"),
}
NAMES_F = ["Maria", "Aiko", "Lena", "Amara", "Grace", "Sofia", "Priya", "Nora"]
NAMES_M = ["Tom", "Samuel", "Ravi", "Jonas", "Omar", "Pedro", "Kofi", "Liam"]
TIMES = ["this morning", "in the evening", "at noon", "late at night", "on Sunday afternoon", "after lunch",
         "early in the morning", "before dinner"]

# (topic, who can do it, places, events). An event is "paraphrase|paraphrase ; other object|...":
# verb phrases that mean the same, the object in brackets, then objects that change the meaning.
TOPICS = [
    ("kitchen", "woman man chef girl", "in the kitchen|at the kitchen counter|in a small kitchen", [
        "slicing [tomatoes]|cutting [tomatoes] into slices|slicing up some [tomatoes] ; onions|potatoes|cucumbers",
        "frying [eggs] in a pan|cooking [eggs] in a frying pan|frying some [eggs] in a skillet ; mushrooms|sausages",
        "washing [the plates]|cleaning [the plates] in the sink|scrubbing [the plates] clean ; the cups|the pans|the glasses",
        "kneading [bread dough]|working [bread dough] by hand|pressing and folding [bread dough] ; pizza dough|pastry",
        "peeling [potatoes]|taking the skin off [potatoes]|removing the peel from some [potatoes] ; apples|carrots"]),
    ("music", "man woman boy girl", "on stage|at a wedding|in a small bar|in the town square", [
        "playing [a guitar]|strumming [a guitar]|playing a song on [a guitar] ; a ukulele|a banjo",
        "playing [the piano]|playing a tune on [the piano]|performing a piece on [the piano] ; the organ|an accordion",
        "singing [a love song]|performing [a love song] ; a folk song|a lullaby|a rock song",
        "playing [the drums]|drumming on [the drums]|beating out a rhythm on [the drums] ; the bongos",
        "playing [the violin]|performing on [the violin]|playing a tune on [the violin] ; the cello|the trumpet"]),
    ("park", "woman man boy girl kids", "in the park|on the grass in the park|near the pond|along the path in the park", [
        "walking [a dog]|taking [a dog] for a walk|out for a walk with [a dog] ; three dogs|a pony",
        "flying [a kite]|flying [a kite] in the wind|letting [a kite] fly high in the air ; a toy plane|a drone",
        "feeding [the ducks]|throwing bread to [the ducks]|giving bread to [the ducks] ; the pigeons|the geese|the swans",
        "riding [a bike]|going for a ride on [a bike]|riding around on [a bike] ; a scooter|a skateboard|a tricycle",
        "having [a picnic]|enjoying [a picnic]|sitting down to [a picnic] ; a barbecue"]),
    ("beach", "kids boy girl woman man", "on the beach|by the sea|on the sand|at the seaside", [
        "building [a sandcastle]|making [a sandcastle]|putting together [a sandcastle] ; a sand turtle|a moat|a tunnel",
        "collecting [shells]|picking up [shells]|gathering [shells] in a bucket ; pebbles|sea glass|driftwood",
        "throwing [a frisbee] for a dog|tossing [a frisbee] to a dog|throwing [a frisbee] for a dog to catch ; a ball|a stick",
        "eating [an ice cream]|enjoying [an ice cream]|having [an ice cream] ; a sandwich|a slice of watermelon|a hot dog",
        "sunbathing on [a towel]|lying in the sun on [a towel]|soaking up the sun on [a towel] ; a deck chair|an air mattress"]),
    ("sport", "boy girl man woman kids", "at the sports ground|on the school field|at the stadium|on a field behind the gym", [
        "kicking [a soccer ball]|kicking [a soccer ball] around|playing with [a soccer ball] ; a rugby ball|a balloon",
        "running [around the track]|doing laps [around the track]|jogging [around the track] ; along the fence|up and down the stands",
        "throwing [a javelin]|hurling [a javelin]|throwing [a javelin] as far as possible ; a discus|a heavy ball",
        "doing [push-ups]|practicing [push-ups]|working through a set of [push-ups] ; sit-ups|jumping jacks|squats",
        "jumping over [a high bar]|clearing [a high bar] with a jump|leaping over [a high bar] ; a low hurdle|a row of cones"]),
    ("office", "woman man clerk", "in the office|at a desk by the window|in a meeting room|in an open-plan office", [
        "typing [an email]|writing [an email] on a laptop|typing out [an email] ; a report|a letter|a shopping list",
        "talking to [a client] on the phone|speaking with [a client] by phone|on a phone call with [a client] ; the bank|a supplier",
        "photocopying [some documents]|making copies of [some documents]|copying [some documents] on the copier ; some photos|a map",
        "showing [sales figures] to colleagues|presenting [sales figures] to colleagues|going through [sales figures] with colleagues ; a budget plan|a new logo"]),
    ("street", "man woman", "on a busy street|in the city center|at the crossroads|downtown", [
        "riding [a motorcycle]|driving [a motorcycle]|speeding along on [a motorcycle] ; a scooter|a moped",
        "crossing [the road]|walking across [the road]|going across [the road] on foot ; the bridge|the square|the tram tracks",
        "waiting for [a bus]|standing at the stop waiting for [a bus]|waiting at the stop for [a bus] ; a taxi|a tram|a friend",
        "selling [hot chestnuts] from a cart|selling [hot chestnuts] from a street cart|running a cart that sells [hot chestnuts] ; flowers|fresh fruit|balloons"]),
    ("garden", "woman man gardener kids", "in the garden|in the backyard|behind the house|in the front yard", [
        "watering [the flowers]|giving water to [the flowers]|sprinkling water on [the flowers] ; the tomato plants|the hedge|a young tree",
        "mowing [the lawn]|cutting [the lawn] with a mower|pushing a mower across [the lawn]",
        "planting [tulip bulbs]|putting [tulip bulbs] in the soil|burying [tulip bulbs] in the soil ; potatoes|seeds",
        "raking [the leaves]|gathering [the leaves] with a rake|raking up [the leaves] ; the grass clippings|the gravel",
        "picking [apples]|harvesting [apples]|gathering ripe [apples] ; plums|pears|cherries"]),
    ("home", "woman man boy girl kids", "in the living room|at home|in the bedroom|upstairs", [
        "watching [a movie]|watching [a movie] on TV|enjoying [a movie] ; a football match|the news|a cartoon",
        "reading [a book]|reading through [a book]|looking through [a book] ; a comic|a letter|a cookbook",
        "folding [the laundry]|sorting and folding [the laundry]|neatly folding [the laundry] ; the towels|the bed sheets",
        "vacuuming [the carpet]|cleaning [the carpet] with a vacuum|running the vacuum over [the carpet] ; the stairs|the curtains",
        "playing [a video game]|busy playing [a video game]|having a go at [a video game] ; a board game|a card game"]),
    ("school", "student teacher boy girl", "in the classroom|at school|in the library|in the school hall", [
        "solving [a math problem]|working out [a math problem]|working through [a math problem] ; a crossword|a riddle",
        "drawing [a horse]|sketching [a horse]|making a drawing of [a horse] ; a cat|a castle|a tree",
        "taking [a history test]|sitting [a history test]|writing answers for [a history test] ; a spelling test|a French test",
        "gluing [paper stars] onto a poster|sticking [paper stars] onto a poster|pasting [paper stars] on a poster ; photos|cut-out letters",
        "giving [a short speech]|delivering [a short speech]|making [a short speech] ; a book report|a talk on volcanoes"]),
    ("farm", "farmer woman man boy girl", "on the farm|in a field|in the farmyard|on a hill farm", [
        "milking [a cow]|milking [a cow] by hand|getting milk from [a cow] ; a goat|a sheep",
        "feeding [the chickens]|throwing grain to [the chickens]|giving food to [the chickens] ; the pigs|the geese",
        "riding [a horse]|going for a ride on [a horse]|riding on [a horse] ; a donkey|a mule",
        "shearing [a sheep]|cutting the wool off [a sheep]|clipping the wool from [a sheep] ; a goat|an alpaca",
        "driving [a tractor]|at the wheel of [a tractor] ; a quad bike|a combine harvester"]),
    ("travel", "woman man traveler kids", "at the airport|at the train station|in the departure hall|on the platform", [
        "pulling [a suitcase]|dragging [a suitcase]|wheeling [a suitcase] along ; a baby stroller|a luggage cart",
        "checking [the departure board]|looking at [the departure board]|reading [the departure board] ; a map|a timetable",
        "buying [a ticket]|paying for [a ticket]|purchasing [a ticket] ; a coffee|a bottle of water|a newspaper",
        "hugging [a friend] goodbye|saying goodbye to [a friend] with a hug|giving [a friend] a farewell hug ; an old man|a soldier",
        "sleeping on [a bench]|taking a nap on [a bench]|dozing on [a bench] ; the floor|a pile of bags"]),
    ("winter", "kids boy girl man woman", "in the snow|on a snowy hill|outside in the cold|in the snowy yard", [
        "building [a snowman]|making [a snowman]|rolling snow into [a snowman] ; a snow fort|an igloo",
        "throwing [snowballs]|tossing [snowballs]|hurling [snowballs] ; chunks of ice|pine cones",
        "carrying [firewood]|hauling [firewood]|bringing in [firewood] ; a bag of salt|a shovel",
        "shoveling [snow] off the path|clearing [snow] from the path|digging [snow] off the path ; ice|wet leaves"]),
    ("cafe", "woman man waiter", "in a cafe|at a restaurant|in a small bistro|in a busy diner", [
        "pouring [coffee]|pouring [coffee] into a cup|filling a cup with [coffee] ; tea|hot chocolate|orange juice",
        "eating [a bowl of soup]|having [a bowl of soup] ; a plate of pasta|a burger|a salad",
        "reading [the menu]|looking at [the menu]|studying [the menu] ; a newspaper|the wine list",
        "carrying [a tray of drinks]|walking with [a tray of drinks]|bringing [a tray of drinks] to a table ; a stack of plates|a birthday cake"]),
]
STOP = set("a an the is are in on at of to with some two and for from into by up out this off down over around along "
           "near across after before back".split())


def load_events():
    events = []
    for topic, (_, agents, places, lines) in enumerate(TOPICS):
        for line in lines:
            vps, _, alts = line.partition(" ; ")
            events.append({"topic": topic, "agents": agents.split(), "places": places.split("|"),
                           "vps": vps.split("|"), "alts": alts.split("|") if alts else []})
    return events


def ways(kind):
    return AGENTS[kind][0] if kind in AGENTS else [kind]


def other_person(rng, kind):
    """Someone who is clearly not `kind` (not just another word for them)."""
    if kind in NAMES_F or kind in NAMES_M:
        own = NAMES_F if kind in NAMES_F else NAMES_M
        options = [n for n in own if n != kind] + (["man", "boy"] if own is NAMES_F else ["woman", "girl"])
    else:
        options = AGENTS[kind][2].split()
    pick = rng.choice(options)
    return rng.choice(NAMES_F) if pick == "@f" else rng.choice(NAMES_M) if pick == "@m" else pick


def scene(rng, ev, kind=None):
    if kind is None:
        kind = rng.choice(ev["agents"])
        if kind in ("woman", "man") and rng.random() < 0.35:
            kind = rng.choice(NAMES_F if kind == "woman" else NAMES_M)
    return {"ev": ev, "kind": kind, "agent": rng.choice(ways(kind)), "vp": rng.randrange(len(ev["vps"])), "obj": None,
            "place": rng.choice(ev["places"]) if rng.random() < 0.85 else None,
            "time": rng.choice(TIMES) if rng.random() < 0.3 else None, "order": rng.choice([0, 0, 0, 1, 2])}


def say(sc):
    vp = re.sub(r"\[([^\]]*)\]", lambda m: sc["obj"] or m.group(1), sc["ev"]["vps"][sc["vp"]])
    core = f"{sc['agent']} {'are' if sc['kind'] == 'kids' else 'is'} {vp}"
    p, t = sc["place"], sc["time"]
    # order 0: person first; 1: place first; 2: time first (a comma after a fronted phrase).
    parts = [f"{p},", core, t] if sc["order"] == 1 and p else [f"{t},", core, p] if sc["order"] == 2 and t else [core, p, t]
    s = " ".join(x for x in parts if x)
    return s[0].upper() + s[1:] + "."


def other(rng, items, not_this):
    return rng.choice([x for x in items if x != not_this])


def make_pair(rng, grade, ev, events):
    """Two scenes whose meaning differs as much as `grade` says, and the kind of variation."""
    a = scene(rng, ev)
    b = dict(a)
    if grade == 5:
        if ev["alts"] and rng.random() < 0.3:
            a["obj"] = b["obj"] = rng.choice(ev["alts"])
        b["vp"] = other(rng, range(len(ev["vps"])), a["vp"])
        if len(ways(a["kind"])) > 1 and rng.random() < 0.7:
            b["agent"] = other(rng, ways(a["kind"]), a["agent"])
        b["order"] = rng.choice([0, 1, 2])
        return a, b, "paraphrase"
    if grade == 4:
        if rng.random() < 0.6:
            b["vp"] = other(rng, range(len(ev["vps"])), a["vp"])
        how = rng.choice(["time", "time"] + (["place"] if a["place"] else []) + (["person"] if a["kind"] in AGENTS else []))
        if how == "time":
            b["time"] = rng.choice(TIMES) if a["time"] is None else rng.choice([None, other(rng, TIMES, a["time"])])
        elif how == "place":
            b["place"], b["order"] = None, 0
        else:
            b["agent"] = AGENTS[a["kind"]][1]
        return a, b, how
    if grade == 3:
        how = "object" if ev["alts"] and rng.random() < 0.55 else "person"
        if how == "object":
            b["obj"] = rng.choice(ev["alts"])
        else:
            b["kind"] = other_person(rng, a["kind"])
            b["agent"] = rng.choice(ways(b["kind"]))
        if rng.random() < 0.5:
            b["vp"] = other(rng, range(len(ev["vps"])), a["vp"])
        return a, b, how
    same_topic = [e for e in events if e["topic"] == ev["topic"] and e is not ev]
    if grade == 2:
        a["place"] = a["place"] or rng.choice(ev["places"])
        same = rng.random() < 1 / 3  # the same person too, or someone else
        b = scene(rng, rng.choice(same_topic), a["kind"] if same else other_person(rng, a["kind"]))
        b["agent"], b["place"] = (a["agent"] if same else b["agent"]), a["place"]
        return a, b, "person and setting" if same else "setting"
    if grade == 1:
        b = scene(rng, rng.choice(same_topic), other_person(rng, a["kind"]))
        b["place"] = None if a["place"] else rng.choice(ev["places"])
        b["time"] = None if a["time"] else b["time"]
        return a, b, "topic"
    b = scene(rng, rng.choice([e for e in events if e["topic"] != ev["topic"]]))
    return a, b, "unrelated"


# How far from the grade each kind of variation sits on average (the rest is seeded jitter).
BIAS = {"paraphrase": 0.0, "time": 0.2, "place": -0.1, "person": -0.1, "object": -0.1, "setting": -0.1,
        "person and setting": 0.2, "topic": 0.0, "unrelated": 0.0}


def words(s):
    return s.lower().replace(",", "").replace(".", "").split()


def main():
    rng = random.Random(20260307)
    events = load_events()
    rows, seen = [], set()
    for grade in range(5, -1, -1):
        order = events[:]
        rng.shuffle(order)
        made, i = 0, 0
        while made < PAIRS_PER_GRADE:
            ev = order[i % len(order)]
            i += 1
            a, b, how = make_pair(rng, grade, ev, events)
            s1, s2 = say(a), say(b)
            if s1 == s2 or (s1, s2) in seen or not all(5 <= len(words(s)) <= 20 for s in (s1, s2)):
                continue
            if grade == 0 and (set(words(s1)) - STOP) & (set(words(s2)) - STOP):
                continue  # "different topics" shares no content word
            if grade <= 1 and a["kind"] == b["kind"]:
                continue
            seen.update([(s1, s2), (s2, s1)])
            if rng.random() < 0.5:
                s1, s2 = s2, s1
            score = grade + BIAS[how] + rng.choice([-0.2, -0.1, 0.0, 0.0, 0.0, 0.1, 0.2])
            score = round(min(5.0, max(0.0, grade - 0.4, min(grade + 0.4, score))), 1)
            rows.append((s1, s2, f"{score:.1f}"))
            made += 1
    rng.shuffle(rows)
    os.makedirs(OUT_DIR, exist_ok=True)
    with open(PAIRS_OUT, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["sentence1", "sentence2", "score"])
        w.writerows(rows)

    # Texts to search: each event once, then more of them with other objects, people and places.
    texts, pool, used = [], events[:], {s for r in rows for s in r[:2]}
    rng.shuffle(pool)
    while len(texts) < TEXTS:
        ev = pool[len(texts) % len(pool)] if len(texts) < len(pool) else rng.choice(events)
        sc = scene(rng, ev)
        if ev["alts"] and (len(texts) >= len(pool) or rng.random() < 0.2):
            sc["obj"] = rng.choice(ev["alts"])
        s = say(sc)
        if s not in texts and s not in used and 5 <= len(words(s)) <= 20:
            texts.append(s)
    with open(TEXTS_OUT, "w", encoding="utf-8", newline="") as f:
        f.write("\n".join(texts) + "\n")
    counts = [sum(1 for r in rows if round(float(r[2])) == g) for g in range(6)]
    print(f"wrote {PAIRS_OUT}: {len(rows)} pairs (per grade 0..5: {counts})")
    print(f"wrote {TEXTS_OUT}: {len(texts)} sentences")


if __name__ == "__main__":
    main()
