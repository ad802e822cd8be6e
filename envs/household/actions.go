package household

// op is the verb of a command.
type op uint8

// ALFWorld's command set.
const (
	opGoTo op = iota + 1
	opOpen
	opClose
	opTake
	opMove
	opExamineRecep
	opExamineObj
	opUse
	opHeat
	opCool
	opClean
	opInventory
	opLook
)

// command is a parsed admissible action: a verb with its object and
// receptacle indexes (-1 when unused).
type command struct {
	op    op
	obj   int16
	recep int16
}

// buildAdmissible lists the actions valid in the current state, in a
// canonical order (a function of the state alone): go to every other
// receptacle; open or close, take, move, examine, heat/cool/clean and use at
// the current one; examine the held object; inventory; look.
func (e *episode) buildAdmissible() {
	e.acts, e.cmds = e.acts[:0], e.cmds[:0]
	for r := range e.w.receps {
		if int16(r) != e.at {
			e.add(e.w.receps[r].str.goTo, command{opGoTo, -1, int16(r)})
		}
	}
	if e.at >= 0 {
		e.addLocal(e.at)
	}
	if e.hand >= 0 {
		e.add(e.w.objs[e.hand].str.examine, command{opExamineObj, e.hand, -1})
	}
	e.add("inventory", command{opInventory, -1, -1})
	e.add("look", command{opLook, -1, -1})
}

// addLocal adds the actions at receptacle r, where the agent stands.
func (e *episode) addLocal(r int16) {
	rc := e.w.receps[r]
	if rc.openable {
		if e.open[r] {
			e.add(rc.str.close, command{opClose, -1, r})
		} else {
			e.add(rc.str.open, command{opOpen, -1, r})
		}
	}
	if e.visible(r) {
		if e.hand < 0 {
			for o := range e.w.objs {
				if e.objAt[o] == r && !e.w.objs[o].fixed {
					e.add(e.pair(opTake, int16(o), r), command{opTake, int16(o), r})
				}
			}
		} else {
			e.add(e.pair(opMove, e.hand, r), command{opMove, e.hand, r})
		}
	}
	e.add(rc.str.examine, command{opExamineRecep, -1, r})
	if e.hand >= 0 {
		if v := applianceOp(rc.kind); v != 0 {
			e.add(e.pair(v, e.hand, r), command{v, e.hand, r})
		}
	}
	if l := e.w.lamp; l >= 0 && e.objAt[l] == r {
		e.add(e.w.objs[l].str.use, command{opUse, l, r})
	}
}

// applianceOp is the verb receptacle kind k performs on a held object.
func applianceOp(k rkind) op {
	switch k {
	case rkMicrowave:
		return opHeat
	case rkFridge:
		return opCool
	case rkSinkbasin, rkBathtubbasin:
		return opClean
	}
	return 0
}

// visible reports whether the contents of receptacle r can be seen and
// reached: it is not openable, or it is open.
func (e *episode) visible(r int16) bool { return !e.w.receps[r].openable || e.open[r] }

func (e *episode) add(s string, c command) {
	e.acts = append(e.acts, s)
	e.cmds = append(e.cmds, c)
}

// pair returns the text of a two-argument command, cached per episode.
func (e *episode) pair(v op, o, r int16) string {
	k := uint32(v)<<24 | uint32(o)<<12 | uint32(r)
	if s, ok := e.pairs[k]; ok {
		return s
	}
	obj, rec := e.w.objs[o].str.name, e.w.receps[r].str.name
	var s string
	switch v {
	case opTake:
		s = "take " + obj + " from " + rec
	case opMove:
		s = "move " + obj + " to " + rec
	case opHeat:
		s = "heat " + obj + " with " + rec
	case opCool:
		s = "cool " + obj + " with " + rec
	case opClean:
		s = "clean " + obj + " with " + rec
	}
	e.pairs[k] = s
	return s
}

// apply carries out an admissible command and returns the observation.
func (e *episode) apply(c command) string {
	e.buf = e.buf[:0]
	switch c.op {
	case opGoTo:
		e.setAt(c.recep)
		e.say("You arrive at ", e.rname(c.recep), ". ")
		e.describe(c.recep)
	case opOpen:
		e.setOpen(c.recep, true)
		e.say("You open the ", e.rname(c.recep), ". ")
		e.describe(c.recep)
	case opClose:
		e.setOpen(c.recep, false)
		e.say("You close the ", e.rname(c.recep), ".")
	case opTake:
		e.setObjAt(c.obj, -1)
		e.setHand(c.obj)
		e.say("You pick up the ", e.oname(c.obj), " from the ", e.rname(c.recep), ".")
	case opMove:
		e.setHand(-1)
		e.setObjAt(c.obj, c.recep)
		e.say("You move the ", e.oname(c.obj), " to the ", e.rname(c.recep), ".")
	case opExamineRecep:
		e.describe(c.recep)
	case opExamineObj:
		e.examineObj(c.obj)
	case opUse:
		e.toggleLamp(c.obj)
	case opHeat:
		e.setFlags(c.obj, e.flags[c.obj]&^flagCool|flagHot)
		e.say("You heat the ", e.oname(c.obj), " using the ", e.rname(c.recep), ".")
	case opCool:
		e.setFlags(c.obj, e.flags[c.obj]&^flagHot|flagCool)
		e.say("You cool the ", e.oname(c.obj), " using the ", e.rname(c.recep), ".")
	case opClean:
		e.setFlags(c.obj, e.flags[c.obj]|flagClean)
		e.say("You clean the ", e.oname(c.obj), " using the ", e.rname(c.recep), ".")
	case opInventory:
		e.inventory()
	case opLook:
		if e.at < 0 {
			return e.w.room
		}
		e.say("You are facing the ", e.rname(e.at), ". Next to it, you see nothing.")
	}
	return string(e.buf)
}

func (e *episode) rname(r int16) string { return e.w.receps[r].str.name }
func (e *episode) oname(o int16) string { return e.w.objs[o].str.name }

// toggleLamp switches the desklamp o on or off.
func (e *episode) toggleLamp(o int16) {
	if e.flags[o]&flagOn != 0 {
		e.setFlags(o, e.flags[o]&^flagOn)
		e.say("You turn off the ", e.oname(o), ".")
		return
	}
	e.setFlags(o, e.flags[o]|flagOn)
	e.say("You turn on the ", e.oname(o), ".")
}
