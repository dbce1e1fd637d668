"""What a simulated home/office contains: room kinds, object classes, colours, words.

Everything here is data. Object classes carry the words a question may use for them (synonyms,
so that retrieval needs semantics rather than string equality) and the activity phrasings that
point at them through an affordance.
"""

from __future__ import annotations

from dataclasses import dataclass

# Named colours (RGB). Small-object colours are saturated so they stand out on pale walls.
COLORS: dict[str, tuple[int, int, int]] = {
    "red": (200, 30, 35),
    "blue": (30, 70, 200),
    "green": (40, 150, 50),
    "yellow": (235, 200, 30),
    "orange": (240, 120, 20),
    "purple": (120, 45, 160),
    "pink": (235, 110, 170),
    "teal": (20, 140, 140),
    "black": (30, 30, 32),
    "white": (238, 238, 232),
    "gray": (120, 120, 125),
    "brown": (120, 72, 38),
    "beige": (205, 185, 150),
    "navy": (25, 35, 100),
    "silver": (175, 178, 185),
}

# Pale wall colours and floor looks per room kind (RGB).
WALL_COLORS = [(214, 208, 196), (200, 210, 218), (222, 214, 200), (205, 214, 200),
               (218, 204, 204), (210, 210, 210)]
FLOOR_COLORS: dict[str, tuple[int, int, int]] = {
    "kitchen": (168, 162, 150), "living room": (150, 112, 80), "office": (96, 100, 112),
    "bedroom": (132, 110, 118), "bathroom": (185, 190, 192), "hallway": (140, 122, 100),
}
CEILING_COLOR = (232, 232, 228)


@dataclass(frozen=True)
class ObjectClass:
    """A kind of object. Sizes are metres (width along its front, depth, height)."""

    label: str
    furniture: bool
    size: tuple[float, float, float]
    colors: tuple[str, ...]
    materials: tuple[str, ...]
    affordances: tuple[str, ...]
    synonyms: tuple[str, ...] = ()
    surface: bool = False  # small objects can stand on its top
    container: bool = False  # small objects can be in it


CLASSES: dict[str, ObjectClass] = {c.label: c for c in [
    # furniture
    ObjectClass("counter", True, (2.2, 0.6, 0.9), ("white", "gray", "beige"), ("stone", "wood"),
                ("prepare food on", "put things on"), ("worktop", "kitchen counter"), surface=True),
    ObjectClass("fridge", True, (0.7, 0.65, 1.8), ("white", "silver"), ("metal",),
                ("keep food cold", "store drinks"), ("refrigerator",)),
    ObjectClass("stove", True, (0.6, 0.6, 0.9), ("black", "white"), ("metal",),
                ("cook on", "heat food"), ("cooker", "oven")),
    ObjectClass("table", True, (1.4, 0.85, 0.75), ("brown", "white", "black"), ("wood", "glass"),
                ("eat at", "put things on"), ("dining table",), surface=True),
    ObjectClass("chair", True, (0.45, 0.45, 0.9), ("brown", "black", "gray", "white"),
                ("wood", "plastic"), ("sit on",), ("seat",)),
    ObjectClass("sofa", True, (2.0, 0.9, 0.85), ("gray", "blue", "green", "beige"), ("fabric", "leather"),
                ("sit on", "lie down on", "watch TV from"), ("couch", "settee"), surface=True),
    ObjectClass("armchair", True, (0.85, 0.85, 0.95), ("brown", "navy", "beige"), ("leather", "fabric"),
                ("sit on", "read in"), ("easy chair",)),
    ObjectClass("coffee table", True, (1.0, 0.6, 0.45), ("brown", "black", "white"), ("wood", "glass"),
                ("put things on",), ("low table",), surface=True),
    ObjectClass("tv stand", True, (1.4, 0.45, 0.5), ("black", "brown"), ("wood",),
                ("put things on",), ("media console",), surface=True),
    ObjectClass("shelf", True, (1.0, 0.35, 1.7), ("brown", "white", "black"), ("wood", "metal"),
                ("store books on", "put things on"), ("bookcase", "bookshelf"), surface=True),
    ObjectClass("desk", True, (1.4, 0.7, 0.75), ("brown", "white", "black"), ("wood",),
                ("work at", "put things on"), ("writing desk", "workstation"), surface=True),
    ObjectClass("bed", True, (1.6, 2.0, 0.55), ("white", "blue", "beige"), ("fabric",),
                ("sleep in", "lie down on", "take a nap on"), ("mattress",), surface=True),
    ObjectClass("nightstand", True, (0.5, 0.45, 0.55), ("brown", "white"), ("wood",),
                ("put things on",), ("bedside table",), surface=True),
    ObjectClass("wardrobe", True, (1.2, 0.6, 2.0), ("brown", "white"), ("wood",),
                ("store clothes in",), ("closet", "armoire")),
    ObjectClass("sink", True, (0.8, 0.5, 0.85), ("white",), ("ceramic",),
                ("wash hands at", "wash up at"), ("washbasin", "basin"), surface=True),
    ObjectClass("bathtub", True, (1.7, 0.75, 0.6), ("white",), ("ceramic",),
                ("take a bath in",), ("tub", "bath")),
    ObjectClass("toilet", True, (0.4, 0.65, 0.75), ("white",), ("ceramic",), ("use the toilet",),
                ("loo", "WC")),
    ObjectClass("shoe rack", True, (0.9, 0.35, 0.5), ("black", "brown"), ("wood", "metal"),
                ("store shoes on", "put things on"), ("shoe shelf",), surface=True),
    ObjectClass("bench", True, (1.2, 0.4, 0.45), ("brown", "gray"), ("wood",),
                ("sit on", "put on shoes at", "put things on"), ("seat bench",), surface=True),
    # small objects
    ObjectClass("kettle", False, (0.22, 0.17, 0.26), ("red", "silver", "black", "white"),
                ("metal", "plastic"), ("boil water", "make tea"), ("electric kettle", "water boiler")),
    ObjectClass("mug", False, (0.11, 0.09, 0.12), ("red", "blue", "yellow", "white", "green", "orange"),
                ("ceramic",), ("drink from", "hold"), ("cup", "coffee cup")),
    ObjectClass("toaster", False, (0.3, 0.18, 0.2), ("silver", "red", "black"), ("metal",),
                ("toast bread",), ("bread toaster",)),
    ObjectClass("bowl", False, (0.26, 0.26, 0.1), ("white", "blue", "orange"), ("ceramic", "glass"),
                ("hold fruit", "eat from"), ("dish", "fruit bowl"), container=True),
    ObjectClass("apple", False, (0.09, 0.09, 0.09), ("red", "green"), ("organic",), ("eat",),
                ("fruit",)),
    ObjectClass("plant", False, (0.35, 0.35, 0.6), ("green",), ("ceramic",), ("water", "decorate"),
                ("houseplant", "potted plant")),
    ObjectClass("remote", False, (0.2, 0.06, 0.04), ("black", "gray"), ("plastic",),
                ("change the channel", "turn on the TV"), ("remote control", "TV remote", "clicker")),
    ObjectClass("tv", False, (1.1, 0.12, 0.65), ("black",), ("plastic",), ("watch shows on",),
                ("television", "TV set")),
    ObjectClass("book", False, (0.24, 0.17, 0.05), ("red", "blue", "green", "yellow", "purple"),
                ("paper",), ("read",), ("novel", "paperback")),
    ObjectClass("lamp", False, (0.3, 0.3, 0.5), ("white", "yellow", "black"), ("metal", "fabric"),
                ("give light", "read by"), ("light", "desk lamp")),
    ObjectClass("cushion", False, (0.45, 0.15, 0.4), ("orange", "yellow", "pink", "teal"), ("fabric",),
                ("lean on",), ("throw pillow", "scatter cushion")),
    ObjectClass("laptop", False, (0.34, 0.25, 0.22), ("silver", "black", "gray"), ("metal",),
                ("work on", "browse the web", "write emails"), ("notebook computer", "computer")),
    ObjectClass("monitor", False, (0.6, 0.18, 0.42), ("black",), ("plastic",), ("display", "watch"),
                ("screen", "display")),
    ObjectClass("backpack", False, (0.32, 0.22, 0.45), ("blue", "red", "black", "green", "orange"),
                ("fabric",), ("carry things",), ("rucksack", "bag", "schoolbag")),
    ObjectClass("alarm clock", False, (0.14, 0.07, 0.1), ("white", "red", "black"), ("plastic",),
                ("tell the time", "wake up with"), ("clock",)),
    ObjectClass("pillow", False, (0.6, 0.4, 0.15), ("white", "blue", "pink"), ("fabric",),
                ("rest your head on",), ("bed pillow",)),
    ObjectClass("towel", False, (0.5, 0.1, 0.4), ("blue", "white", "pink", "teal"), ("fabric",),
                ("dry hands with", "dry off"), ("bath towel",)),
    ObjectClass("soap dispenser", False, (0.08, 0.08, 0.18), ("white", "green", "pink"), ("plastic",),
                ("wash hands with",), ("soap", "soap pump")),
    ObjectClass("laundry basket", False, (0.5, 0.38, 0.5), ("white", "gray", "blue"), ("plastic",),
                ("collect dirty clothes",), ("hamper", "clothes basket")),
    ObjectClass("umbrella", False, (0.12, 0.12, 0.9), ("black", "red", "yellow", "blue"), ("fabric",),
                ("keep dry in the rain",), ("brolly", "parasol")),
    ObjectClass("helmet", False, (0.28, 0.24, 0.2), ("white", "black", "orange"), ("plastic",),
                ("protect your head",), ("bike helmet",)),
    ObjectClass("vase", False, (0.16, 0.16, 0.32), ("white", "blue", "teal"), ("glass", "ceramic"),
                ("hold flowers",), ("flower vase",)),
]}

# Furniture per room kind: (label, where) with where in {"wall", "center", "with:<label>"}.
ROOM_FURNITURE: dict[str, list[tuple[str, str]]] = {
    "kitchen": [("counter", "wall"), ("fridge", "wall"), ("stove", "wall"), ("table", "center"),
                ("chair", "with:table"), ("chair", "with:table"), ("chair", "with:table")],
    "living room": [("sofa", "wall"), ("tv stand", "wall"), ("coffee table", "center"),
                    ("armchair", "wall"), ("shelf", "wall")],
    "office": [("desk", "wall"), ("chair", "with:desk"), ("shelf", "wall")],
    "bedroom": [("bed", "wall"), ("nightstand", "with:bed"), ("wardrobe", "wall")],
    "bathroom": [("sink", "wall"), ("bathtub", "wall"), ("toilet", "wall")],
    "hallway": [("shoe rack", "wall"), ("bench", "wall")],
}

# Small objects per room kind: (label, placement) with placement "on:<a>|<b>", "under:<a>",
# "in:<label>" or "floor".
ROOM_SMALL: dict[str, list[tuple[str, str]]] = {
    "kitchen": [("kettle", "on:counter"), ("toaster", "on:counter"), ("mug", "on:counter|table"),
                ("bowl", "on:table"), ("apple", "in:bowl"), ("plant", "floor")],
    "living room": [("tv", "on:tv stand"), ("remote", "on:coffee table"), ("book", "on:coffee table|shelf"),
                    ("plant", "floor"), ("lamp", "floor"), ("cushion", "on:sofa"), ("vase", "on:shelf")],
    "office": [("laptop", "on:desk"), ("monitor", "on:desk"), ("mug", "on:desk"),
               ("book", "on:shelf|desk"), ("backpack", "under:desk"), ("plant", "floor")],
    "bedroom": [("lamp", "on:nightstand"), ("alarm clock", "on:nightstand"), ("pillow", "on:bed"),
                ("book", "on:bed|nightstand"), ("backpack", "floor"), ("laundry basket", "floor")],
    "bathroom": [("towel", "on:bathtub|sink"), ("soap dispenser", "on:sink"), ("laundry basket", "floor")],
    "hallway": [("umbrella", "floor"), ("helmet", "on:bench|shoe rack"), ("plant", "floor"),
                ("backpack", "on:bench")],
}

ROOM_KINDS_OPTIONAL = ["office", "bedroom", "bathroom"]

# Activity phrasings (action_place questions) -> the affordance they point at.
ACTION_PHRASES: dict[str, list[str]] = {
    "read in": ["Where can I sit down to read?", "Where is a comfy spot to read a book?"],
    "lie down on": ["Where could I lie down for a bit?", "Where can I stretch out and relax?"],
    "take a nap on": ["Where could I take a nap?", "Where can I get some sleep?"],
    "cook on": ["Where can I cook dinner?", "Where could I fry some eggs?"],
    "keep food cold": ["Where can I keep my groceries cold?", "Where should I put the milk?"],
    "wash hands at": ["Where can I wash my hands?", "Where could I rinse my face?"],
    "work at": ["Where can I sit and work on my computer?", "Where is a good place to do paperwork?"],
    "eat at": ["Where can I have a meal?", "Where could we sit down for dinner?"],
    "take a bath in": ["Where can I take a bath?", "Where could I have a long soak?"],
    "store clothes in": ["Where can I hang up my clothes?", "Where should I put away my jacket?"],
    "put on shoes at": ["Where can I sit to put on my shoes?", "Where could I sit while tying my laces?"],
    "store books on": ["Where can I put my books away?", "Where do books get stored?"],
    "watch TV from": ["Where can I sit to watch TV?", "Where is the best seat for a movie night?"],
}

# Affordance phrasings (object_search questions) -> "something to ..." wording.
AFFORDANCE_PHRASES: dict[str, list[str]] = {
    "boil water": ["Where did I see something to boil water with?",
                   "Where was the thing I could heat water for tea in?"],
    "drink from": ["Where did I see something I could drink coffee from?"],
    "change the channel": ["Where did I see something to switch TV channels with?"],
    "toast bread": ["Where did I see something to make toast with?"],
    "tell the time": ["Where did I see something that shows the time?"],
    "carry things": ["Where did I see something to carry my things in?"],
    "keep dry in the rain": ["Where did I see something to keep me dry in the rain?"],
    "protect your head": ["Where did I see something to protect my head while cycling?"],
    "dry hands with": ["Where did I see something to dry my hands with?"],
    "hold flowers": ["Where did I see something to put flowers in?"],
    "browse the web": ["Where did I see something I could browse the web on?"],
    "collect dirty clothes": ["Where did I see something to put dirty laundry in?"],
    "give light": ["Where did I see something that gives light?"],
}


def size_word(size: tuple[float, float, float]) -> str:
    """small / medium / large from an object's largest dimension."""
    m = max(size)
    return "small" if m < 0.4 else ("medium" if m < 1.0 else "large")


# -- generalisation worlds (``vlkng sim --varied``) only; the default worlds never use these ------
# Classes the default worlds never contain (another catalogue), with their own words.
VARIED_CLASSES: dict[str, ObjectClass] = {c.label: c for c in [
    ObjectClass("dresser", True, (1.1, 0.5, 0.9), ("brown", "white", "gray"), ("wood",),
                ("store clothes in", "put things on"), ("chest of drawers", "bureau"), surface=True),
    ObjectClass("treadmill", True, (0.8, 1.8, 1.3), ("black", "gray"), ("metal", "plastic"),
                ("run on", "exercise on"), ("running machine", "exercise machine")),
    ObjectClass("washing machine", True, (0.6, 0.6, 0.85), ("white", "silver"), ("metal",),
                ("wash clothes in",), ("washer", "laundry machine")),
    ObjectClass("sideboard", True, (1.6, 0.45, 0.85), ("brown", "white", "black"), ("wood",),
                ("store dishes in", "put things on"), ("buffet", "credenza"), surface=True),
    ObjectClass("piano", True, (1.5, 0.6, 1.2), ("black", "brown", "white"), ("wood",),
                ("play music on",), ("upright piano", "keyboard instrument")),
    ObjectClass("microwave", False, (0.48, 0.36, 0.28), ("white", "silver", "black"), ("metal",),
                ("heat food", "warm up leftovers"), ("microwave oven",)),
    ObjectClass("dumbbell", False, (0.3, 0.12, 0.12), ("black", "gray", "blue"), ("metal",),
                ("lift weights with",), ("hand weight", "free weight")),
    ObjectClass("guitar", False, (0.38, 0.12, 1.0), ("brown", "black", "red"), ("wood",),
                ("play music on",), ("acoustic guitar",)),
    ObjectClass("trash can", False, (0.3, 0.3, 0.45), ("gray", "black", "white"), ("plastic", "metal"),
                ("throw rubbish in",), ("bin", "waste basket", "garbage can")),
    ObjectClass("fire extinguisher", False, (0.16, 0.16, 0.5), ("red",), ("metal",),
                ("put out a fire",), ("extinguisher",)),
    ObjectClass("printer", False, (0.45, 0.38, 0.22), ("white", "black", "gray"), ("plastic",),
                ("print documents",), ("inkjet printer", "laser printer")),
    ObjectClass("candle", False, (0.08, 0.08, 0.15), ("white", "red", "yellow", "purple"), ("wax",),
                ("give light",), ("tea light",)),
    ObjectClass("teapot", False, (0.22, 0.16, 0.18), ("white", "blue", "green"), ("ceramic",),
                ("make tea", "pour tea"), ("tea kettle",)),
]}
ALL_CLASSES: dict[str, ObjectClass] = {**CLASSES, **VARIED_CLASSES}

# More words a question may use for a class (on top of ``synonyms``): other dialects, brand-like
# and everyday names the tuned worlds never asked with.
VARIED_SYNONYMS: dict[str, tuple[str, ...]] = {
    "fridge": ("icebox", "cooler"), "sofa": ("lounge", "loveseat", "davenport"), "tv": ("telly", "flatscreen"),
    "mug": ("beaker", "tumbler"), "shelf": ("shelving unit", "rack"), "bed": ("double bed", "bunk"),
    "wardrobe": ("clothes cupboard",), "toilet": ("lavatory", "commode"), "lamp": ("lampshade", "reading light"),
    "backpack": ("knapsack", "daypack"), "laptop": ("macbook", "notebook"), "plant": ("fern", "greenery"),
    "cushion": ("bolster",), "kettle": ("tea kettle",), "stove": ("hob", "range"), "counter": ("countertop",),
    "remote": ("zapper",), "chair": ("stool", "dining chair"), "table": ("kitchen table",),
    "desk": ("bureau desk", "computer desk"), "towel": ("hand towel",), "umbrella": ("rain umbrella",),
    "bowl": ("basin bowl", "salad bowl"), "book": ("hardback", "textbook"), "armchair": ("recliner", "wingback"),
    "monitor": ("computer screen",), "nightstand": ("night table",), "sink": ("hand basin",),
}

# Room kinds and contents only the generalisation worlds have, and extra things in the usual rooms.
VARIED_ROOM_KINDS = ["office", "bedroom", "bathroom", "bedroom", "dining room", "laundry room", "gym", "study"]
VARIED_FLOOR_COLORS: dict[str, tuple[int, int, int]] = {
    "dining room": (142, 104, 70), "laundry room": (176, 178, 170), "gym": (70, 74, 80), "study": (120, 96, 74)}
VARIED_ROOM_FURNITURE: dict[str, list[tuple[str, str]]] = {
    "dining room": [("table", "center"), ("chair", "with:table"), ("sideboard", "wall"), ("shelf", "wall")],
    "laundry room": [("washing machine", "wall"), ("sink", "wall"), ("shelf", "wall")],
    "gym": [("treadmill", "wall"), ("bench", "wall"), ("shelf", "wall")],
    "study": [("desk", "wall"), ("chair", "with:desk"), ("piano", "wall"), ("armchair", "wall")],
    "bedroom": [("dresser", "wall")], "living room": [("piano", "wall")], "hallway": [("sideboard", "wall")],
}
VARIED_ROOM_SMALL: dict[str, list[tuple[str, str]]] = {
    "dining room": [("vase", "on:table|sideboard"), ("candle", "on:table|sideboard"), ("bowl", "on:table"),
                    ("teapot", "on:sideboard|table")],
    "laundry room": [("laundry basket", "floor"), ("towel", "on:shelf|washing machine"), ("trash can", "floor")],
    "gym": [("dumbbell", "floor"), ("towel", "on:bench"), ("fire extinguisher", "floor"), ("plant", "floor")],
    "study": [("printer", "on:desk"), ("lamp", "on:desk"), ("guitar", "floor"), ("book", "on:desk|armchair")],
    "kitchen": [("microwave", "on:counter"), ("trash can", "floor"), ("fire extinguisher", "floor")],
    "living room": [("candle", "on:coffee table|shelf"), ("guitar", "floor")],
    "office": [("printer", "on:desk|shelf"), ("trash can", "floor")],
}
