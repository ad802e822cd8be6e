package shop

// optionDim is one option dimension of a product type (colour, size, …).
type optionDim struct {
	// Name is the dimension as shown on the item page ("color").
	Name string
	// Phrase renders a chosen value in an instruction; %s is the value.
	Phrase string
	// Values are every value the dimension can take in this product type.
	Values []string
}

// productType is one kind of product: what its titles, attributes, options
// and prices look like. The table below is the whole vocabulary the
// catalogue is generated from.
type productType struct {
	// Name is the type phrase used in queries and instructions.
	Name string
	// Category is the coarse category, used as the task type.
	Category string
	// Path is the category path department › subcategory › leaf; WebShop's
	// category match compares its levels.
	Path [3]string
	// Heads are the title endings naming the type ("Throw Blanket").
	Heads []string
	// Descriptors are style words put before the head in titles.
	Descriptors []string
	// Attributes are the attribute phrases products of the type may have.
	Attributes []string
	// Options are the type's option dimensions.
	Options []optionDim
	// MinPrice and MaxPrice bound the base price of a family.
	MinPrice, MaxPrice float64
}

// Categories are the task types, in TaskTypes order.
var categories = []string{"beauty", "electronics", "fashion", "food", "furniture", "home"}

// brands are invented brand names; every family draws one.
var brands = []string{
	"Northwind", "Ashford", "Brightline", "Solace", "Everpeak", "Luma",
	"Kestrel", "Marlowe", "Oakhaven", "Pinecrest", "Quillon", "Rivana",
	"Sunvale", "Tidewell", "Vantor", "Willowby", "Zephra", "Halden",
	"Corvo", "Belmar", "Fennick", "Glenmore", "Juniper", "Larkin",
}

// materialNouns are nouns that may occur in titles besides the type nouns;
// together with typeNouns they form the lexicon of title nouns used by the
// type reward.
var materialNouns = []string{
	"fleece", "sherpa", "flannel", "cotton", "velvet", "linen", "bamboo",
	"leather", "silicone", "ceramic", "granite", "steel", "corduroy", "waffle",
	"biotin", "keratin", "aloe", "shimmer", "satin",
}

// typeNouns are the nouns of the type heads.
var typeNouns = []string{
	"blanket", "throw", "bed", "pillow", "cover", "case", "cushion", "towel",
	"bath", "bundle", "pan", "skillet", "shampoo", "lipstick", "moisturizer",
	"cream", "face", "nail", "polish", "lacquer", "earbuds", "headphones",
	"phone", "cable", "cord", "hdmi", "charger", "bank", "battery", "pack",
	"shoes", "shirt", "tee", "dress", "jacket", "windbreaker", "shell", "rain",
	"coffee", "blend", "roast", "protein", "bars", "snack", "nutrition", "tea",
	"bags", "nuts", "assortment", "chair", "office", "desk", "computer",
	"bookshelf", "bookcase", "storage", "table", "stand", "tv", "console",
	"center", "media", "entertainment",
}

// colors used by several types.
var (
	textileColors = []string{"navy blue", "charcoal gray", "beige", "sage green", "burgundy", "ivory"}
	basicColors   = []string{"black", "white", "gray", "navy blue", "red"}
	woodColors    = []string{"walnut", "white", "black", "natural oak", "rustic brown"}
)

// productTypes is the catalogue's vocabulary: 24 types in 6 categories.
var productTypes = []productType{
	// home
	{
		Name: "blanket", Category: "home", Path: [3]string{"home", "bedding", "blankets"},
		Heads:       []string{"Blanket", "Throw Blanket", "Bed Blanket"},
		Descriptors: []string{"Cozy", "Plush", "Fleece", "Sherpa", "Flannel", "Knitted", "Velvet"},
		Attributes:  []string{"machine washable", "super soft", "lightweight", "fade resistant", "easy to clean", "all season", "hypoallergenic", "wrinkle free"},
		Options: []optionDim{
			{Name: "color", Phrase: "in %s", Values: textileColors},
			{Name: "size", Phrase: "%s size", Values: []string{"twin", "full", "queen", "king"}},
		},
		MinPrice: 20, MaxPrice: 90,
	},
	{
		Name: "pillow cover", Category: "home", Path: [3]string{"home", "decor", "pillows"},
		Heads:       []string{"Throw Pillow Cover", "Pillow Case", "Pillow Cushion Cover"},
		Descriptors: []string{"Velvet", "Linen", "Boho", "Farmhouse", "Cotton", "Corduroy"},
		Attributes:  []string{"machine washable", "hidden zipper", "double sided", "super soft", "fade resistant", "pet friendly", "wrinkle free", "set of 2"},
		Options: []optionDim{
			{Name: "color", Phrase: "in %s", Values: textileColors},
			{Name: "size", Phrase: "in size %s", Values: []string{"16x16 inch", "18x18 inch", "20x20 inch", "12x20 inch"}},
		},
		MinPrice: 8, MaxPrice: 35,
	},
	{
		Name: "bath towel", Category: "home", Path: [3]string{"home", "bath", "towels"},
		Heads:       []string{"Bath Towel Set", "Bath Towel Bundle", "Towel Set"},
		Descriptors: []string{"Cotton", "Bamboo", "Turkish", "Luxury", "Waffle", "Plush"},
		Attributes:  []string{"quick dry", "highly absorbent", "machine washable", "hotel quality", "lint free", "fade resistant", "super soft", "oeko tex certified"},
		Options: []optionDim{
			{Name: "color", Phrase: "in %s", Values: textileColors},
			{Name: "pack", Phrase: "as a %s set", Values: []string{"2 piece", "4 piece", "6 piece", "8 piece"}},
		},
		MinPrice: 15, MaxPrice: 70,
	},
	{
		Name: "frying pan", Category: "home", Path: [3]string{"home", "kitchen", "cookware"},
		Heads:       []string{"Frying Pan", "Skillet Pan", "Fry Pan"},
		Descriptors: []string{"Ceramic", "Granite", "Stainless Steel", "Hard Anodized", "Classic", "Pro"},
		Attributes:  []string{"nonstick coating", "dishwasher safe", "oven safe", "induction compatible", "pfoa free", "easy to clean", "stay cool handle", "heavy duty"},
		Options: []optionDim{
			{Name: "size", Phrase: "in %s", Values: []string{"8 inch", "10 inch", "12 inch"}},
			{Name: "color", Phrase: "in %s", Values: []string{"black", "gray", "red", "blue"}},
		},
		MinPrice: 15, MaxPrice: 80,
	},
	// beauty
	{
		Name: "shampoo", Category: "beauty", Path: [3]string{"beauty", "hair care", "shampoo"},
		Heads:       []string{"Shampoo", "Daily Shampoo", "Shampoo for Men and Women"},
		Descriptors: []string{"Moisturizing", "Clarifying", "Volumizing", "Argan Oil", "Biotin", "Keratin"},
		Attributes:  []string{"sulfate free", "paraben free", "cruelty free", "natural ingredients", "color safe", "dry hair", "hair growth", "dandruff control"},
		Options: []optionDim{
			{Name: "scent", Phrase: "with %s scent", Values: []string{"lavender", "coconut", "tea tree", "citrus", "unscented"}},
			{Name: "size", Phrase: "in %s", Values: []string{"8 fl oz", "12 fl oz", "16 fl oz", "32 fl oz"}},
		},
		MinPrice: 6, MaxPrice: 40,
	},
	{
		Name: "lipstick", Category: "beauty", Path: [3]string{"beauty", "makeup", "lips"},
		Heads:       []string{"Lipstick", "Matte Lipstick", "Liquid Lipstick"},
		Descriptors: []string{"Velvet", "Satin", "Creamy", "Classic", "Bold", "Glossy"},
		Attributes:  []string{"long lasting", "cruelty free", "highly pigmented", "paraben free", "easy to apply", "waterproof", "vegan formula", "smudge proof"},
		Options: []optionDim{
			{Name: "color", Phrase: "in %s", Values: []string{"ruby red", "nude pink", "berry", "coral", "mauve", "plum"}},
			{Name: "count", Phrase: "in a pack of %s", Values: []string{"1 count", "2 count", "3 count"}},
		},
		MinPrice: 5, MaxPrice: 30,
	},
	{
		Name: "face moisturizer", Category: "beauty", Path: [3]string{"beauty", "skin care", "face"},
		Heads:       []string{"Face Moisturizer", "Daily Face Cream", "Face Moisturizing Cream"},
		Descriptors: []string{"Hydrating", "Gentle", "Renewing", "Vitamin C", "Aloe", "Radiant"},
		Attributes:  []string{"fragrance free", "sensitive skin", "hyaluronic acid", "non greasy", "cruelty free", "dry skin", "oil free", "dermatologist tested"},
		Options: []optionDim{
			{Name: "size", Phrase: "in %s", Values: []string{"1.7 oz", "2.5 oz", "4 oz"}},
			{Name: "formula", Phrase: "as a %s", Values: []string{"day cream", "night cream", "gel"}},
		},
		MinPrice: 10, MaxPrice: 60,
	},
	{
		Name: "nail polish", Category: "beauty", Path: [3]string{"beauty", "nails", "polish"},
		Heads:       []string{"Nail Polish", "Gel Nail Polish", "Nail Lacquer"},
		Descriptors: []string{"Glossy", "Salon", "Classic", "Shimmer", "Pastel", "Bold"},
		Attributes:  []string{"quick dry", "long lasting", "non toxic", "easy to apply", "cruelty free", "high gloss", "chip resistant", "vegan formula"},
		Options: []optionDim{
			{Name: "color", Phrase: "in %s", Values: []string{"classic red", "soft pink", "midnight blue", "nude", "black"}},
			{Name: "count", Phrase: "as a %s", Values: []string{"single bottle", "3 pack", "6 pack"}},
		},
		MinPrice: 5, MaxPrice: 30,
	},
	// electronics
	{
		Name: "wireless earbuds", Category: "electronics", Path: [3]string{"electronics", "audio", "headphones"},
		Heads:       []string{"Wireless Earbuds", "Bluetooth Earbuds", "Earbuds Headphones"},
		Descriptors: []string{"Sport", "Mini", "Pro", "Ultra", "Studio", "Active"},
		Attributes:  []string{"noise cancelling", "long battery life", "fast charging", "water resistant", "touch control", "built in microphone", "hands free calling", "low latency"},
		Options: []optionDim{
			{Name: "color", Phrase: "in %s", Values: []string{"black", "white", "navy blue", "rose gold"}},
		},
		MinPrice: 20, MaxPrice: 150,
	},
	{
		Name: "phone case", Category: "electronics", Path: [3]string{"electronics", "accessories", "cases"},
		Heads:       []string{"Phone Case", "Protective Phone Case", "Phone Cover"},
		Descriptors: []string{"Armor", "Rugged", "Silicone", "Leather", "Glitter", "Matte"},
		Attributes:  []string{"shockproof", "slim fit", "wireless charging compatible", "scratch resistant", "easy to install", "raised edges", "drop protection", "anti yellowing"},
		Options: []optionDim{
			{Name: "color", Phrase: "in %s", Values: []string{"clear", "black", "navy blue", "pink", "green"}},
			{Name: "model", Phrase: "for %s", Values: []string{"iphone 14", "iphone 15", "galaxy s23", "galaxy s24", "pixel 8"}},
		},
		MinPrice: 8, MaxPrice: 40,
	},
	{
		Name: "hdmi cable", Category: "electronics", Path: [3]string{"electronics", "cables", "video"},
		Heads:       []string{"HDMI Cable", "HDMI 2.1 Cable", "HDMI Cord"},
		Descriptors: []string{"Premium", "Ultra", "Pro", "Certified", "Slim", "Flat"},
		Attributes:  []string{"high speed", "4k support", "gold plated", "braided nylon", "ethernet channel", "8k support", "flexible design", "durable connectors"},
		Options: []optionDim{
			{Name: "length", Phrase: "%s long", Values: []string{"3 ft", "6 ft", "10 ft", "15 ft"}},
			{Name: "color", Phrase: "in %s", Values: []string{"black", "gray", "white"}},
		},
		MinPrice: 6, MaxPrice: 30,
	},
	{
		Name: "portable charger", Category: "electronics", Path: [3]string{"electronics", "power", "portable chargers"},
		Heads:       []string{"Portable Charger", "Power Bank Charger", "Battery Pack Charger"},
		Descriptors: []string{"Slim", "Mini", "Ultra", "Pro", "Magnetic", "Solar"},
		Attributes:  []string{"fast charging", "usb c", "lightweight", "led display", "dual output", "compact design", "airline approved", "built in cable"},
		Options: []optionDim{
			{Name: "capacity", Phrase: "with %s", Values: []string{"5000mah", "10000mah", "20000mah", "26800mah"}},
			{Name: "color", Phrase: "in %s", Values: []string{"black", "white", "blue"}},
		},
		MinPrice: 15, MaxPrice: 70,
	},
	// fashion
	{
		Name: "running shoes", Category: "fashion", Path: [3]string{"fashion", "shoes", "athletic"},
		Heads:       []string{"Running Shoes", "Road Running Shoes", "Athletic Shoes"},
		Descriptors: []string{"Cushioned", "Trail", "Sport", "Classic", "Performance", "Tempo"},
		Attributes:  []string{"lightweight", "non slip", "breathable mesh", "arch support", "memory foam", "wide toe box", "shock absorbing", "rubber sole"},
		Options: []optionDim{
			{Name: "color", Phrase: "in %s", Values: basicColors},
			{Name: "size", Phrase: "in size %s", Values: []string{"7", "8", "9", "10", "11", "12"}},
		},
		MinPrice: 30, MaxPrice: 120,
	},
	{
		Name: "t-shirt", Category: "fashion", Path: [3]string{"fashion", "men", "shirts"},
		Heads:       []string{"T-Shirt", "Cotton T-Shirt", "Tee Shirt"},
		Descriptors: []string{"Classic", "Vintage", "Basic", "Heavyweight", "Everyday", "Essential"},
		Attributes:  []string{"machine washable", "short sleeve", "crew neck", "moisture wicking", "relaxed fit", "tagless", "pre shrunk", "classic fit"},
		Options: []optionDim{
			{Name: "color", Phrase: "in %s", Values: []string{"black", "white", "heather gray", "navy blue", "olive green"}},
			{Name: "size", Phrase: "in size %s", Values: []string{"small", "medium", "large", "x-large", "xx-large"}},
		},
		MinPrice: 10, MaxPrice: 40,
	},
	{
		Name: "summer dress", Category: "fashion", Path: [3]string{"fashion", "women", "dresses"},
		Heads:       []string{"Summer Dress", "Midi Dress", "Maxi Dress", "Sun Dress"},
		Descriptors: []string{"Boho", "Casual", "Elegant", "Wrap", "Tiered", "Smocked"},
		Attributes:  []string{"floral print", "v neck", "short sleeve", "with pockets", "flowy fit", "machine washable", "high waist", "adjustable straps"},
		Options: []optionDim{
			{Name: "color", Phrase: "in %s", Values: []string{"black", "floral blue", "wine red", "dusty pink", "white"}},
			{Name: "size", Phrase: "in size %s", Values: []string{"small", "medium", "large", "x-large"}},
		},
		MinPrice: 20, MaxPrice: 70,
	},
	{
		Name: "rain jacket", Category: "fashion", Path: [3]string{"fashion", "outerwear", "jackets"},
		Heads:       []string{"Rain Jacket", "Windbreaker Jacket", "Shell Jacket"},
		Descriptors: []string{"Outdoor", "Trail", "Urban", "Classic", "Sport", "Travel"},
		Attributes:  []string{"waterproof", "packable", "hooded", "zipper pockets", "windproof", "breathable lining", "adjustable cuffs", "reflective details"},
		Options: []optionDim{
			{Name: "color", Phrase: "in %s", Values: []string{"black", "navy blue", "olive green", "yellow", "red"}},
			{Name: "size", Phrase: "in size %s", Values: []string{"small", "medium", "large", "x-large"}},
		},
		MinPrice: 30, MaxPrice: 120,
	},
	// food
	{
		Name: "ground coffee", Category: "food", Path: [3]string{"food", "beverages", "coffee"},
		Heads:       []string{"Ground Coffee", "Coffee", "Coffee Blend"},
		Descriptors: []string{"Medium Roast", "Dark Roast", "Breakfast", "House", "Colombian", "Espresso"},
		Attributes:  []string{"organic", "fair trade", "low acid", "non gmo", "kosher", "single origin", "small batch", "rainforest alliance"},
		Options: []optionDim{
			{Name: "flavor", Phrase: "with %s flavor", Values: []string{"original", "hazelnut", "vanilla", "mocha", "caramel"}},
			{Name: "size", Phrase: "in a %s bag", Values: []string{"12 oz", "24 oz", "2 lb"}},
		},
		MinPrice: 8, MaxPrice: 35,
	},
	{
		Name: "protein bars", Category: "food", Path: [3]string{"food", "snacks", "bars"},
		Heads:       []string{"Protein Bars", "Protein Snack Bars", "Nutrition Bars"},
		Descriptors: []string{"Crunchy", "Chewy", "Double", "Classic", "Soft Baked", "Layered"},
		Attributes:  []string{"gluten free", "low sugar", "high protein", "keto friendly", "non gmo", "plant based", "soy free", "dairy free"},
		Options: []optionDim{
			{Name: "flavor", Phrase: "with %s flavor", Values: []string{"chocolate chip", "peanut butter", "cookie dough", "salted caramel"}},
			{Name: "count", Phrase: "in a box of %s", Values: []string{"12 count", "15 count", "24 count"}},
		},
		MinPrice: 15, MaxPrice: 45,
	},
	{
		Name: "tea bags", Category: "food", Path: [3]string{"food", "beverages", "tea"},
		Heads:       []string{"Tea Bags", "Herbal Tea", "Tea"},
		Descriptors: []string{"Calming", "Classic", "Premium", "Wellness", "Evening", "Morning"},
		Attributes:  []string{"organic", "caffeine free", "non gmo", "kosher", "sugar free", "gluten free", "individually wrapped", "fair trade"},
		Options: []optionDim{
			{Name: "flavor", Phrase: "with %s flavor", Values: []string{"green", "chamomile", "peppermint", "earl grey", "chai"}},
			{Name: "count", Phrase: "in a box of %s", Values: []string{"20 count", "50 count", "100 count"}},
		},
		MinPrice: 5, MaxPrice: 30,
	},
	{
		Name: "mixed nuts", Category: "food", Path: [3]string{"food", "snacks", "nuts"},
		Heads:       []string{"Mixed Nuts", "Nuts Assortment", "Snack Nuts"},
		Descriptors: []string{"Premium", "Deluxe", "Classic", "Party Size", "Gourmet", "Toasted"},
		Attributes:  []string{"unsalted", "dry roasted", "non gmo", "resealable bag", "keto friendly", "gluten free", "kosher", "high protein"},
		Options: []optionDim{
			{Name: "flavor", Phrase: "with %s flavor", Values: []string{"sea salt", "honey glazed", "lightly salted", "smoked"}},
			{Name: "size", Phrase: "in a %s pack", Values: []string{"8 oz", "16 oz", "2 lb"}},
		},
		MinPrice: 8, MaxPrice: 35,
	},
	// furniture
	{
		Name: "office chair", Category: "furniture", Path: [3]string{"furniture", "office", "chairs"},
		Heads:       []string{"Office Chair", "Desk Chair", "Computer Chair"},
		Descriptors: []string{"Executive", "Task", "High Back", "Mid Back", "Modern", "Swivel"},
		Attributes:  []string{"lumbar support", "adjustable height", "ergonomic design", "easy assembly", "breathable mesh", "padded armrests", "rolling casters", "heavy duty"},
		Options: []optionDim{
			{Name: "color", Phrase: "in %s", Values: []string{"black", "gray", "white", "blue"}},
		},
		MinPrice: 60, MaxPrice: 250,
	},
	{
		Name: "bookshelf", Category: "furniture", Path: [3]string{"furniture", "storage", "shelves"},
		Heads:       []string{"Bookshelf", "Bookcase Bookshelf", "Storage Bookshelf"},
		Descriptors: []string{"Modern", "Rustic", "Ladder", "Corner", "Tall", "Classic"},
		Attributes:  []string{"easy assembly", "solid wood", "space saving", "heavy duty", "anti tip kit", "adjustable shelves", "industrial style", "open back"},
		Options: []optionDim{
			{Name: "color", Phrase: "in %s", Values: woodColors},
			{Name: "size", Phrase: "with %s", Values: []string{"3 tier", "4 tier", "5 tier"}},
		},
		MinPrice: 40, MaxPrice: 200,
	},
	{
		Name: "side table", Category: "furniture", Path: [3]string{"furniture", "living room", "tables"},
		Heads:       []string{"Side Table", "End Table", "Accent Table"},
		Descriptors: []string{"Modern", "Rustic", "Nesting", "Farmhouse", "Minimalist", "Narrow"},
		Attributes:  []string{"easy assembly", "storage shelf", "solid wood", "tempered glass", "mid century", "space saving", "charging station", "round top"},
		Options: []optionDim{
			{Name: "color", Phrase: "in %s", Values: woodColors},
			{Name: "pack", Phrase: "as a %s", Values: []string{"single table", "set of 2"}},
		},
		MinPrice: 30, MaxPrice: 150,
	},
	{
		Name: "tv stand", Category: "furniture", Path: [3]string{"furniture", "living room", "tv stands"},
		Heads:       []string{"TV Stand", "TV Stand Media Console", "Entertainment Center TV Stand"},
		Descriptors: []string{"Modern", "Rustic", "Farmhouse", "Low Profile", "Corner", "Minimalist"},
		Attributes:  []string{"easy assembly", "cable management", "storage shelf", "solid wood", "led lights", "heavy duty", "mid century", "glass doors"},
		Options: []optionDim{
			{Name: "color", Phrase: "in %s", Values: woodColors},
			{Name: "size", Phrase: "for a %s tv", Values: []string{"55 inch", "65 inch", "75 inch"}},
		},
		MinPrice: 80, MaxPrice: 300,
	},
}
