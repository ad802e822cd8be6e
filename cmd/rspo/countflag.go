package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/pflag"
)

// countValue is an int flag that takes only counts of at least 1: a zero
// never stands for a default (the flag's default value is the real one).
type countValue int

func (c *countValue) String() string { return strconv.Itoa(int(*c)) }
func (c *countValue) Type() string   { return "int" }

func (c *countValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("%q is not an integer", s)
	}
	if n < 1 {
		return fmt.Errorf("%d is not a count: give at least 1", n)
	}
	*c = countValue(n)
	return nil
}

// countVar registers a count flag bound to p, whose default is *p.
func countVar(fs *pflag.FlagSet, p *int, name, usage string) {
	fs.Var((*countValue)(p), name, usage)
}

// derivedCountVar registers a count flag whose default, derived from other
// flags, is described by def; *p stays 0 (derived) until the flag is given.
func derivedCountVar(fs *pflag.FlagSet, p *int, name, def, usage string) {
	fs.Var((*countValue)(p), name, usage+" (default "+def+")")
}
