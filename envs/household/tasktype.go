package household

// ttype is a task type, indexing TaskTypes.
type ttype uint8

// The six ALFWorld task types.
const (
	pickAndPlace ttype = iota
	pickTwoAndPlace
	lookAtObjInLight
	pickCleanThenPlace
	pickHeatThenPlace
	pickCoolThenPlace
	numTypes
)

// typeNames are the task type names, in TaskTypes order.
var typeNames = [numTypes]string{
	"pick_and_place",
	"pick_two_and_place",
	"look_at_obj_in_light",
	"pick_clean_then_place",
	"pick_heat_then_place",
	"pick_cool_then_place",
}

// TaskTypes lists the six task types in a stable order.
func TaskTypes() []string { return typeNames[:] }

// parseType resolves a task type name.
func parseType(name string) (ttype, bool) {
	for i, n := range typeNames {
		if n == name {
			return ttype(i), true
		}
	}
	return 0, false
}

// Object states a task may require of its object.
const (
	flagClean uint8 = 1 << iota
	flagHot
	flagCool
	flagOn // a desklamp that is switched on
)

// needFlag is the state the placed object must be in, 0 for none.
func (t ttype) needFlag() uint8 {
	switch t {
	case pickCleanThenPlace:
		return flagClean
	case pickHeatThenPlace:
		return flagHot
	case pickCoolThenPlace:
		return flagCool
	}
	return 0
}

// ability is the object ability a task of type t needs.
func (t ttype) ability() uint8 {
	switch t {
	case lookAtObjInLight:
		return canLook
	case pickCleanThenPlace:
		return canClean
	case pickHeatThenPlace:
		return canHeat
	case pickCoolThenPlace:
		return canCool
	}
	return canPlace
}

// isTool reports whether receptacle kind k is the appliance of task type t
// (and so never its target: "put a hot apple in microwave" would be odd).
func (t ttype) isTool(k rkind) bool {
	switch t {
	case pickCleanThenPlace:
		return k == rkSinkbasin || k == rkBathtubbasin
	case pickHeatThenPlace:
		return k == rkMicrowave
	case pickCoolThenPlace:
		return k == rkFridge
	}
	return false
}

// instruction phrases a task in one of ALFWorld's two templates per type.
func (t ttype) instruction(template int, obj, target string) string {
	alt := template%2 == 1
	switch t {
	case pickTwoAndPlace:
		if alt {
			return "find two " + obj + " and put them in " + target + "."
		}
		return "put two " + obj + " in " + target + "."
	case lookAtObjInLight:
		if alt {
			return "examine the " + obj + " with the " + lampName + "."
		}
		return "look at " + obj + " under the " + lampName + "."
	case pickCleanThenPlace:
		if alt {
			return "clean some " + obj + " and put it in " + target + "."
		}
		return "put a clean " + obj + " in " + target + "."
	case pickHeatThenPlace:
		if alt {
			return "heat some " + obj + " and put it in " + target + "."
		}
		return "put a hot " + obj + " in " + target + "."
	case pickCoolThenPlace:
		if alt {
			return "cool some " + obj + " and put it in " + target + "."
		}
		return "put a cool " + obj + " in " + target + "."
	}
	if alt {
		return "put some " + obj + " on " + target + "."
	}
	return "put a " + obj + " in " + target + "."
}
