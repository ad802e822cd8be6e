package household

import "strconv"

// The catalog is the fixed vocabulary of homes: receptacle kinds, object
// kinds with their placement priors and abilities, and scene types. It is
// data; init resolves the names into indexes once. Changing it changes the
// worlds behind every seed, so the golden files of the fixed splits and the
// transcripts must be regenerated (and the change called out).

// rkind indexes recepKinds; okind indexes objKinds; scene indexes scenes.
type (
	rkind uint8
	okind uint8
	scene uint8
)

// recepKindInfo describes one kind of receptacle.
type recepKindInfo struct {
	name     string
	openable bool
}

// recepKinds lists every receptacle kind in alphabetical order, which is
// also the order of receptacles in a home.
var recepKinds = []recepKindInfo{
	{"armchair", false}, {"bathtubbasin", false}, {"bed", false}, {"cabinet", true},
	{"coffeemachine", false}, {"coffeetable", false}, {"countertop", false}, {"desk", false},
	{"diningtable", false}, {"drawer", true}, {"dresser", false}, {"fridge", true},
	{"garbagecan", false}, {"handtowelholder", false}, {"laundryhamper", false}, {"microwave", true},
	{"ottoman", false}, {"safe", true}, {"shelf", false}, {"sidetable", false},
	{"sinkbasin", false}, {"sofa", false}, {"stoveburner", false}, {"toaster", false},
	{"toilet", false}, {"toiletpaperhanger", false}, {"towelholder", false}, {"tvstand", false},
}

// Ability flags of object kinds: which task types an object kind can be
// the subject of.
const (
	canHeat uint8 = 1 << iota
	canCool
	canClean
	canLook
	canPlace // every takeable object can be picked and placed
)

// Scene membership flags.
const (
	inKitchen uint8 = 1 << iota
	inLivingroom
	inBedroom
	inBathroom
)

// objKindInfo describes one kind of object: where it is found and how likely
// on each kind of receptacle (weights, relative within the object).
type objKindInfo struct {
	name   string
	abil   uint8
	scenes uint8
	priors map[string]float64
}

const (
	heatCool   = canHeat | canCool | canClean | canPlace
	washable   = canClean | canPlace
	lookable   = canLook | canPlace
	placeOnly  = canPlace
	livingBed  = inLivingroom | inBedroom
	kitchenBth = inKitchen | inBathroom
)

// objKinds lists every object kind; the desklamp is a fixed fixture (not
// takeable) placed in every living room and bedroom.
var objKinds = []objKindInfo{
	{"alarmclock", lookable, livingBed, map[string]float64{"desk": 4, "sidetable": 3, "dresser": 3, "shelf": 2}},
	{"apple", heatCool, inKitchen, map[string]float64{"countertop": 4, "diningtable": 3, "fridge": 5, "garbagecan": 1, "microwave": 1, "sinkbasin": 1}},
	{"book", lookable, livingBed, map[string]float64{"desk": 3, "bed": 3, "sidetable": 2, "shelf": 3, "drawer": 1, "coffeetable": 2, "sofa": 1, "dresser": 1}},
	{"bowl", canClean | canLook | canPlace, inKitchen | livingBed, map[string]float64{"cabinet": 3, "countertop": 3, "diningtable": 3, "fridge": 1, "microwave": 1, "sinkbasin": 1, "shelf": 2, "desk": 1, "sidetable": 1, "coffeetable": 1, "dresser": 1}},
	{"box", lookable, livingBed, map[string]float64{"coffeetable": 2, "sidetable": 2, "shelf": 2, "dresser": 1, "desk": 1, "sofa": 1, "armchair": 1, "cabinet": 1, "tvstand": 1}},
	{"bread", canHeat | canCool | canPlace, inKitchen, map[string]float64{"countertop": 4, "diningtable": 3, "fridge": 2, "cabinet": 1, "microwave": 1}},
	{"butterknife", washable, inKitchen, map[string]float64{"countertop": 3, "diningtable": 3, "drawer": 4, "sinkbasin": 1}},
	{"candle", placeOnly, inBathroom | inLivingroom, map[string]float64{"countertop": 3, "toilet": 3, "shelf": 2, "cabinet": 2, "bathtubbasin": 1, "drawer": 1, "coffeetable": 1, "sidetable": 1}},
	{"cd", lookable, livingBed, map[string]float64{"desk": 3, "drawer": 3, "shelf": 2, "sidetable": 2, "safe": 1, "garbagecan": 1}},
	{"cellphone", lookable, livingBed, map[string]float64{"desk": 3, "bed": 3, "sidetable": 3, "dresser": 2, "drawer": 1, "sofa": 2, "armchair": 1, "coffeetable": 1}},
	{"cloth", washable, inBathroom | inBedroom, map[string]float64{"countertop": 2, "cabinet": 3, "bathtubbasin": 2, "sinkbasin": 2, "toilet": 1, "drawer": 2, "shelf": 1, "laundryhamper": 3, "bed": 1}},
	{"creditcard", lookable, livingBed, map[string]float64{"desk": 3, "drawer": 2, "sidetable": 2, "dresser": 2, "shelf": 1, "coffeetable": 2, "sofa": 1, "armchair": 1, "safe": 1}},
	{"cup", heatCool, inKitchen, map[string]float64{"cabinet": 4, "countertop": 2, "diningtable": 2, "fridge": 1, "microwave": 1, "sinkbasin": 2, "shelf": 1, "coffeemachine": 1}},
	{"dishsponge", washable, kitchenBth, map[string]float64{"sinkbasin": 3, "countertop": 2, "cabinet": 1, "drawer": 1, "toilet": 1}},
	{"egg", heatCool, inKitchen, map[string]float64{"fridge": 5, "countertop": 2, "diningtable": 2, "garbagecan": 1, "microwave": 1, "sinkbasin": 1}},
	{"fork", washable, inKitchen, map[string]float64{"drawer": 4, "countertop": 3, "diningtable": 3, "sinkbasin": 1}},
	{"glassbottle", placeOnly, inKitchen, map[string]float64{"cabinet": 2, "countertop": 2, "diningtable": 2, "fridge": 1, "shelf": 1, "garbagecan": 1}},
	{"handtowel", placeOnly, inBathroom, map[string]float64{"handtowelholder": 5, "countertop": 1, "shelf": 1}},
	{"kettle", washable, inKitchen, map[string]float64{"stoveburner": 4, "countertop": 2, "cabinet": 2, "shelf": 1}},
	{"keychain", lookable, livingBed, map[string]float64{"desk": 2, "drawer": 3, "sidetable": 2, "dresser": 2, "shelf": 1, "coffeetable": 2, "safe": 2, "sofa": 1}},
	{"knife", washable, inKitchen, map[string]float64{"countertop": 4, "diningtable": 3, "drawer": 2, "sinkbasin": 1}},
	{"ladle", washable, inKitchen, map[string]float64{"drawer": 3, "countertop": 3, "diningtable": 2, "sinkbasin": 1}},
	{"laptop", lookable, livingBed, map[string]float64{"desk": 4, "bed": 3, "sofa": 2, "coffeetable": 2, "diningtable": 1, "armchair": 1}},
	{"lettuce", canCool | canClean | canPlace, inKitchen, map[string]float64{"fridge": 5, "countertop": 3, "diningtable": 3, "garbagecan": 1, "sinkbasin": 1}},
	{"mug", heatCool | canLook, inKitchen | livingBed, map[string]float64{"cabinet": 3, "countertop": 3, "coffeemachine": 2, "diningtable": 2, "sinkbasin": 1, "fridge": 1, "microwave": 1, "shelf": 1, "desk": 2, "sidetable": 1}},
	{"newspaper", lookable, inLivingroom, map[string]float64{"coffeetable": 3, "sofa": 3, "armchair": 2, "sidetable": 2, "diningtable": 2, "ottoman": 1, "garbagecan": 1}},
	{"pan", canCool | canClean | canPlace, inKitchen, map[string]float64{"stoveburner": 4, "countertop": 2, "cabinet": 2, "fridge": 1, "sinkbasin": 1}},
	{"pen", lookable, livingBed, map[string]float64{"desk": 4, "drawer": 3, "sidetable": 2, "shelf": 1, "dresser": 1, "garbagecan": 1}},
	{"pencil", lookable, livingBed, map[string]float64{"desk": 4, "drawer": 3, "sidetable": 2, "shelf": 1, "dresser": 1, "garbagecan": 1}},
	{"peppershaker", placeOnly, inKitchen, map[string]float64{"countertop": 3, "diningtable": 3, "cabinet": 2, "drawer": 1, "shelf": 2}},
	{"pillow", lookable, livingBed, map[string]float64{"bed": 5, "sofa": 4, "armchair": 3}},
	{"plate", heatCool, inKitchen, map[string]float64{"cabinet": 3, "countertop": 3, "diningtable": 3, "fridge": 1, "sinkbasin": 1, "shelf": 1}},
	{"plunger", placeOnly, inBathroom, map[string]float64{"cabinet": 3, "toilet": 1, "garbagecan": 1}},
	{"pot", canCool | canClean | canPlace, inKitchen, map[string]float64{"stoveburner": 4, "countertop": 2, "cabinet": 2, "fridge": 1, "sinkbasin": 1, "shelf": 1}},
	{"potato", heatCool, inKitchen, map[string]float64{"countertop": 3, "diningtable": 3, "fridge": 4, "garbagecan": 1, "microwave": 1, "sinkbasin": 1}},
	{"remotecontrol", lookable, livingBed, map[string]float64{"coffeetable": 4, "sofa": 3, "armchair": 2, "sidetable": 2, "tvstand": 3, "dresser": 1}},
	{"saltshaker", placeOnly, inKitchen, map[string]float64{"countertop": 3, "diningtable": 3, "cabinet": 2, "drawer": 1, "shelf": 2}},
	{"scrubbrush", placeOnly, inBathroom, map[string]float64{"toilet": 3, "cabinet": 3, "bathtubbasin": 1}},
	{"soapbar", washable, inBathroom, map[string]float64{"sinkbasin": 3, "bathtubbasin": 3, "countertop": 2, "toilet": 2, "cabinet": 2, "garbagecan": 1}},
	{"soapbottle", placeOnly, kitchenBth, map[string]float64{"countertop": 2, "cabinet": 2, "shelf": 1, "sinkbasin": 1, "toilet": 2}},
	{"spatula", washable, inKitchen, map[string]float64{"drawer": 3, "countertop": 3, "diningtable": 2, "sinkbasin": 1}},
	{"spoon", washable, inKitchen, map[string]float64{"drawer": 4, "countertop": 3, "diningtable": 3, "sinkbasin": 1}},
	{"spraybottle", placeOnly, inBathroom, map[string]float64{"toilet": 3, "cabinet": 3, "countertop": 2, "shelf": 1, "garbagecan": 1, "drawer": 1}},
	{"statue", lookable, livingBed, map[string]float64{"shelf": 4, "coffeetable": 2, "sidetable": 2, "dresser": 2, "desk": 1, "diningtable": 1, "cabinet": 1, "tvstand": 1}},
	{"teddybear", placeOnly, inBedroom, map[string]float64{"bed": 3, "armchair": 2, "shelf": 1, "dresser": 1}},
	{"tissuebox", lookable, livingBed | inBathroom, map[string]float64{"sidetable": 3, "dresser": 2, "coffeetable": 2, "shelf": 2, "toilet": 2, "countertop": 1, "desk": 1}},
	{"toiletpaper", placeOnly, inBathroom, map[string]float64{"toiletpaperhanger": 4, "toilet": 3, "cabinet": 2, "countertop": 1, "shelf": 1, "drawer": 1, "garbagecan": 1}},
	{"tomato", heatCool, inKitchen, map[string]float64{"countertop": 3, "diningtable": 3, "fridge": 4, "garbagecan": 1, "microwave": 1, "sinkbasin": 1}},
	{"towel", placeOnly, inBathroom, map[string]float64{"towelholder": 5, "bathtubbasin": 1, "countertop": 1, "shelf": 1}},
	{"vase", lookable, livingBed, map[string]float64{"shelf": 4, "coffeetable": 2, "sidetable": 2, "diningtable": 2, "dresser": 2, "cabinet": 1, "tvstand": 1}},
	{"watch", lookable, livingBed, map[string]float64{"desk": 2, "drawer": 2, "sidetable": 3, "dresser": 3, "shelf": 1, "coffeetable": 1, "safe": 1}},
	{"winebottle", canCool | canPlace, inKitchen, map[string]float64{"countertop": 3, "diningtable": 3, "cabinet": 2, "fridge": 2, "shelf": 1}},
}

// The desklamp is not in objKinds' placement pool: it is a fixture.
const lampName = "desklamp"

// sceneInfo describes a scene type: its anchor receptacle (always present),
// the most of each receptacle kind a home of that scene may hold, and
// whether it has a desklamp (on one of lampHosts).
type sceneInfo struct {
	name   string
	flag   uint8
	anchor string
	limits map[string]int
	lamp   bool
}

var scenes = []sceneInfo{
	{"kitchen", inKitchen, "countertop", map[string]int{
		"cabinet": 16, "drawer": 10, "countertop": 3, "shelf": 3, "stoveburner": 4, "coffeemachine": 1,
		"toaster": 1, "diningtable": 1, "fridge": 1, "microwave": 1, "sinkbasin": 1, "garbagecan": 1}, false},
	{"livingroom", inLivingroom, "sofa", map[string]int{
		"sofa": 1, "armchair": 2, "coffeetable": 1, "sidetable": 2, "diningtable": 1, "drawer": 10, "cabinet": 10,
		"shelf": 8, "tvstand": 1, "garbagecan": 1, "safe": 1, "ottoman": 1, "dresser": 1, "desk": 1}, true},
	{"bedroom", inBedroom, "bed", map[string]int{
		"bed": 1, "desk": 1, "drawer": 12, "dresser": 1, "shelf": 10, "sidetable": 2, "garbagecan": 1,
		"laundryhamper": 1, "safe": 1, "cabinet": 10, "armchair": 1}, true},
	{"bathroom", inBathroom, "toilet", map[string]int{
		"toilet": 1, "sinkbasin": 2, "bathtubbasin": 1, "countertop": 1, "cabinet": 12, "drawer": 12, "shelf": 7,
		"towelholder": 2, "handtowelholder": 1, "toiletpaperhanger": 1, "garbagecan": 1}, false},
}

// lampHosts are the receptacle kinds a desklamp stands on.
var lampHosts = []string{"desk", "dresser", "sidetable"}

// maxPerKind bounds the instance numbers of receptacles and objects.
const (
	maxRecepNum = 16
	maxObjNum   = 9
)

// Resolved catalog, filled by init.
var (
	rkindByName = map[string]rkind{}
	okindByName = map[string]okind{}
	// objPriors[o] lists (receptacle kind, weight) for object kind o.
	objPriors [][]prior
	// recepNames[k][n] etc. hold "cabinet 3", "go to cabinet 3", ... so
	// that homes share their strings instead of building them per episode.
	recepNames [][maxRecepNum + 1]recepStrings
	objNames   [][maxObjNum + 1]objStrings
	lampKind   okind
	// Kinds used by the rules of the world.
	rkMicrowave, rkFridge, rkSinkbasin, rkBathtubbasin rkind
)

type prior struct {
	kind rkind
	w    float64
}

// recepStrings are the cached texts of one numbered receptacle.
type recepStrings struct {
	name, goTo, open, close, examine string
}

// objStrings are the cached texts of one numbered object.
type objStrings struct {
	name, withArticle, examine, use string
}

func init() {
	for i, k := range recepKinds {
		rkindByName[k.name] = rkind(i)
	}
	for i, o := range objKinds {
		okindByName[o.name] = okind(i)
	}
	lampKind = okind(len(objKinds))
	okindByName[lampName] = lampKind
	rkMicrowave, rkFridge = mustRkind("microwave"), mustRkind("fridge")
	rkSinkbasin, rkBathtubbasin = mustRkind("sinkbasin"), mustRkind("bathtubbasin")
	for _, o := range objKinds {
		objPriors = append(objPriors, resolvePriors(o.priors))
	}
	buildNames()
}

// mustRkind resolves a receptacle kind name; a typo in the catalog panics at init.
func mustRkind(name string) rkind {
	k, ok := rkindByName[name]
	if !ok {
		panic("household: catalog names unknown receptacle kind " + name)
	}
	return k
}

// resolvePriors turns a name-keyed prior into a slice in receptacle-kind order.
func resolvePriors(m map[string]float64) []prior {
	out := make([]prior, 0, len(m))
	for i, k := range recepKinds {
		if w, ok := m[k.name]; ok {
			out = append(out, prior{rkind(i), w})
		}
	}
	for name := range m {
		mustRkind(name)
	}
	return out
}

// buildNames fills the string caches.
func buildNames() {
	recepNames = make([][maxRecepNum + 1]recepStrings, len(recepKinds))
	for k, info := range recepKinds {
		for n := 1; n <= maxRecepNum; n++ {
			name := info.name + " " + strconv.Itoa(n)
			recepNames[k][n] = recepStrings{name, "go to " + name, "open " + name, "close " + name, "examine " + name}
		}
	}
	objNames = make([][maxObjNum + 1]objStrings, len(objKinds)+1)
	for k := range objNames {
		for n := 1; n <= maxObjNum; n++ {
			name := okindName(okind(k)) + " " + strconv.Itoa(n)
			objNames[k][n] = objStrings{name, "a " + name, "examine " + name, "use " + name}
		}
	}
}

// okindName names an object kind, including the desklamp.
func okindName(k okind) string {
	if k == lampKind {
		return lampName
	}
	return objKinds[k].name
}
