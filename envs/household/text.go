package household

// The observation texts follow ALFWorld's wording. They are built in the
// episode's reusable buffer: one allocation per step, for the final string.

// say appends parts to the observation buffer.
func (e *episode) say(parts ...string) {
	for _, p := range parts {
		e.buf = append(e.buf, p...)
	}
}

// describe appends what the agent sees of receptacle r: "The cabinet 3 is
// closed.", "The cabinet 3 is open. In it, you see a cup 1.", or "On the
// countertop 1, you see a apple 2, and a knife 1."
func (e *episode) describe(r int16) {
	name := e.rname(r)
	switch {
	case !e.w.receps[r].openable:
		e.say("On the ", name, ", you see ")
	case e.open[r]:
		e.say("The ", name, " is open. In it, you see ")
	default:
		e.say("The ", name, " is closed.")
		return
	}
	e.contents(r)
	e.buf = append(e.buf, '.')
}

// contents appends the list of objects in receptacle r, or "nothing".
func (e *episode) contents(r int16) {
	n := 0
	for _, at := range e.objAt {
		if at == r {
			n++
		}
	}
	if n == 0 {
		e.say("nothing")
		return
	}
	i := 0
	for o, at := range e.objAt {
		if at != r {
			continue
		}
		switch {
		case i == 0:
		case i == n-1:
			e.say(", and ")
		default:
			e.say(", ")
		}
		e.say(e.w.objs[o].str.withArticle)
		i++
	}
}

// examineObj describes the held object o and its state.
func (e *episode) examineObj(o int16) {
	var adj [3]string
	n := 0
	f := e.flags[o]
	for _, a := range [...]struct {
		flag uint8
		word string
	}{{flagClean, "clean"}, {flagHot, "hot"}, {flagCool, "cool"}} {
		if f&a.flag != 0 {
			adj[n] = a.word
			n++
		}
	}
	if n == 0 {
		e.say("There's nothing special about ", e.oname(o), ".")
		return
	}
	e.say("This is a ", adj[0])
	if n > 1 {
		e.say(" and ", adj[1])
	}
	e.say(" ", e.oname(o), ".")
}

// inventory lists what the agent holds.
func (e *episode) inventory() {
	if e.hand < 0 {
		e.say("You are not carrying anything.")
		return
	}
	e.say("You are carrying: ", e.w.objs[e.hand].str.withArticle, ".")
}
