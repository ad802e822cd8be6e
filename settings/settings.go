package settings

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Setting is one declared setting of a configuration struct.
type Setting struct {
	// Key is the flag's name and the configuration file's key.
	Key string
	// Aliases are older keys that still read.
	Aliases []string
	// Default is the value a fresh configuration starts from, as text.
	Default string
	// Derived, when not empty, says what a zero value is filled in from.
	Derived string
	// Help is the one-line description of --help.
	Help string
	// Group is the heading the setting is listed under.
	Group string
	// Stages are the stages that read the setting.
	Stages []string
	// Recipes maps a recipe's name to the value it sets, as text.
	Recipes map[string]string
	// Min and Max bound a number inclusively, Above exclusively from below.
	Min, Max, Above *float64
	// Count marks an integer of at least 1.
	Count bool
	// Enum lists the allowed values of a string.
	Enum []string

	typ   reflect.Type
	index []int
}

// Type is the Go type of the setting's value.
func (s Setting) Type() reflect.Type { return s.typ }

// Ptr returns a pointer to the setting's field in the struct v points to.
func (s Setting) Ptr(v any) any {
	return reflect.ValueOf(v).Elem().FieldByIndex(s.index).Addr().Interface()
}

// Value returns the setting's value in the struct v points to, as text.
func (s Setting) Value(v any) string { return Text(s.Ptr(v)) }

// DefaultFor is the setting's default under recipe: the recipe's value
// when it sets one, else Default.
func (s Setting) DefaultFor(recipe string) string {
	if v, ok := s.Recipes[recipe]; ok {
		return v
	}
	return s.Default
}

// UsedBy reports whether stage reads the setting.
func (s Setting) UsedBy(stage string) bool {
	return slices.Contains(s.Stages, stage)
}

var tables sync.Map // reflect.Type -> tableResult

type tableResult struct {
	settings []Setting
	err      error
}

// Table returns the settings declared in the struct v points to (or in
// the struct type v is, given as a reflect.Type), in declaration order.
// It panics on a malformed declaration: TableOf returns the error, for a
// test that checks every declaration.
func Table(v any) []Setting {
	s, err := TableOf(structType(v))
	if err != nil {
		panic(err)
	}
	return s
}

// TableOf returns the settings declared in the struct type t.
func TableOf(t reflect.Type) ([]Setting, error) {
	if r, ok := tables.Load(t); ok {
		return r.(tableResult).settings, r.(tableResult).err
	}
	var out []Setting
	err := collect(t, nil, &out)
	if err == nil {
		err = checkUnique(out)
	}
	tables.Store(t, tableResult{out, err})
	return out, err
}

func structType(v any) reflect.Type {
	if t, ok := v.(reflect.Type); ok {
		return t
	}
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// collect appends the settings of struct type t, whose fields sit at
// index prefix in the outer struct.
func collect(t reflect.Type, prefix []int, out *[]Setting) error {
	if t.Kind() != reflect.Struct {
		return fmt.Errorf("settings: %v is not a struct", t)
	}
	for i := range t.NumField() {
		f := t.Field(i)
		key, ok := f.Tag.Lookup("setting")
		if !ok {
			continue
		}
		index := append(append([]int(nil), prefix...), i)
		if key == ",inline" {
			if err := collect(f.Type, index, out); err != nil {
				return err
			}
			continue
		}
		s, err := declare(f, key, index)
		if err != nil {
			return fmt.Errorf("settings: %s.%s: %w", t.Name(), f.Name, err)
		}
		*out = append(*out, s)
	}
	return nil
}

// declare reads one field's declaration and checks that its default and
// recipe values parse and pass its own checks.
func declare(f reflect.StructField, key string, index []int) (Setting, error) {
	tag := f.Tag
	s := Setting{Key: key, Default: tag.Get("default"), Derived: tag.Get("derived"), Help: tag.Get("help"),
		Group: tag.Get("group"), Aliases: splitList(tag.Get("alias"), ","), Stages: splitList(tag.Get("stages"), ","),
		Enum: splitList(tag.Get("enum"), "|"), Count: tag.Get("count") == "true", typ: f.Type, index: index}
	if !kindSupported(f.Type) {
		return s, fmt.Errorf("type %v cannot be a setting", f.Type)
	}
	var err error
	for name, dst := range map[string]**float64{"min": &s.Min, "max": &s.Max, "above": &s.Above} {
		if text := tag.Get(name); text != "" {
			v, perr := strconv.ParseFloat(text, 64)
			if perr != nil {
				return s, fmt.Errorf("%s %q: %w", name, text, perr)
			}
			*dst = &v
		}
	}
	if s.Recipes, err = parseRecipes(tag.Get("recipe")); err != nil {
		return s, err
	}
	if s.Help == "" {
		return s, fmt.Errorf("setting %s has no help", key)
	}
	for recipe, text := range s.Recipes {
		if err := s.checkText(text); err != nil {
			return s, fmt.Errorf("recipe %s: %w", recipe, err)
		}
	}
	if s.Derived == "" {
		if err := s.checkText(s.Default); err != nil {
			return s, fmt.Errorf("default: %w", err)
		}
	}
	return s, nil
}

// checkText parses text as the setting's value and checks it.
func (s Setting) checkText(text string) error {
	p := reflect.New(s.typ)
	if err := Set(p.Interface(), text); err != nil {
		return err
	}
	return s.check(p.Interface())
}

func parseRecipes(text string) (map[string]string, error) {
	if text == "" {
		return nil, nil
	}
	out := map[string]string{}
	for _, part := range strings.Split(text, ";") {
		name, value, ok := strings.Cut(part, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("recipe %q: want name=value", part)
		}
		out[name] = value
	}
	return out, nil
}

func splitList(text, sep string) []string {
	if text == "" {
		return nil
	}
	return strings.Split(text, sep)
}

func checkUnique(table []Setting) error {
	seen := map[string]bool{}
	for _, s := range table {
		for _, k := range append([]string{s.Key}, s.Aliases...) {
			if seen[k] {
				return fmt.Errorf("settings: key %q is declared twice", k)
			}
			seen[k] = true
		}
	}
	return nil
}

// Lookup returns the setting of the struct v points to whose key or
// alias is key, and whether key was an alias.
func Lookup(v any, key string) (s Setting, alias bool, ok bool) {
	for _, s := range Table(v) {
		if s.Key == key {
			return s, false, true
		}
		for _, a := range s.Aliases {
			if a == key {
				return s, true, true
			}
		}
	}
	return Setting{}, false, false
}

// Keys lists the keys of the struct v points to, in declaration order.
func Keys(v any) []string {
	table := Table(v)
	keys := make([]string, len(table))
	for i, s := range table {
		keys[i] = s.Key
	}
	return keys
}

// Defaults sets every setting of the struct v points to to its declared
// default under recipe ("" for none): a derived setting to its zero value.
func Defaults(v any, recipe string) {
	for _, s := range Table(v) {
		text := s.DefaultFor(recipe)
		if s.Derived != "" && text == s.Default {
			reflect.ValueOf(s.Ptr(v)).Elem().SetZero()
			continue
		}
		if err := Set(s.Ptr(v), text); err != nil {
			panic(err) // declare checked every default
		}
	}
}

// ApplyRecipe sets every setting recipe names to the recipe's value,
// except those given reports true for (the ones the user set).
func ApplyRecipe(v any, recipe string, given func(key string) bool) {
	for _, s := range Table(v) {
		text, ok := s.Recipes[recipe]
		if !ok || given(s.Key) {
			continue
		}
		if err := Set(s.Ptr(v), text); err != nil {
			panic(err) // declare checked every recipe value
		}
	}
}

// Recipes lists every recipe name the struct v points to declares values
// for, sorted.
func Recipes(v any) []string {
	seen := map[string]bool{}
	for _, s := range Table(v) {
		for r := range s.Recipes {
			seen[r] = true
		}
	}
	out := make([]string, 0, len(seen))
	for r := range seen {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}
