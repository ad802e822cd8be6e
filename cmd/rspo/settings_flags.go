package main

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rspo-dev/rspo/pipeline"
	"github.com/rspo-dev/rspo/settings"
)

// The stages whose flags registerSettings registers: "run" is `rspo run`
// (every stage in one process); the others are `rspo serve STAGE`.
const (
	stageRun      = "run"
	stageLearner  = "learner"
	stageActor    = "actor"
	stageExplorer = "explorer"
)

// groupAnnotation is the pflag annotation that holds a flag's group.
const groupAnnotation = "rspo_group"

// settingValue is a flag bound to one declared setting (package
// settings): it parses as the declaration says and refuses what the
// declaration refuses, naming what to give instead.
type settingValue struct {
	s   settings.Setting
	ptr any
	// given is set once the flag is given: a list's first item replaces
	// the default, later ones append.
	given bool
}

var (
	_ pflag.Value      = (*settingValue)(nil)
	_ pflag.SliceValue = (*settingValue)(nil)
)

func (v *settingValue) String() string { return settings.Text(v.ptr) }

func (v *settingValue) Type() string {
	t := v.s.Type()
	switch {
	case settings.IsDuration(t):
		return "duration"
	case t.Kind() == reflect.Bool:
		return "bool"
	case t.Kind() == reflect.Float64:
		return "float"
	case t.Kind() == reflect.Int, t.Kind() == reflect.Int64:
		return "int"
	case t.Kind() == reflect.Slice:
		return "strings"
	case t.Kind() == reflect.Map:
		return "KEY=VALUE"
	}
	return "string"
}

// Set parses text over the setting: a list or mapping gains its items
// (the first Set replaces the default), anything else is replaced.
func (v *settingValue) Set(text string) error {
	tmp := reflect.New(v.s.Type())
	if err := settings.Set(tmp.Interface(), text); err != nil {
		return err
	}
	if v.given {
		mergeInto(tmp, reflect.ValueOf(v.ptr))
	}
	if err := v.s.CheckGiven(tmp.Interface()); err != nil {
		return fmt.Errorf("want %s", err)
	}
	reflect.ValueOf(v.ptr).Elem().Set(tmp.Elem())
	v.given = true
	return nil
}

// mergeInto puts the items the setting held (old) before the new ones
// (tmp) of a list, and the old keys a mapping's new ones do not override.
func mergeInto(tmp, old reflect.Value) {
	o, n := old.Elem(), tmp.Elem()
	switch n.Kind() {
	case reflect.Slice:
		n.Set(reflect.AppendSlice(reflect.AppendSlice(reflect.MakeSlice(n.Type(), 0, o.Len()+n.Len()), o), n))
	case reflect.Map:
		for _, k := range o.MapKeys() {
			if !n.MapIndex(k).IsValid() {
				n.SetMapIndex(k, o.MapIndex(k))
			}
		}
	}
}

// GetSlice, Replace and Append make a list setting a pflag.SliceValue, so
// a list flag given on the command line replaces a config file's list.
func (v *settingValue) GetSlice() []string {
	if r := reflect.ValueOf(v.ptr).Elem(); r.Kind() == reflect.Slice {
		return slices.Clone(r.Interface().([]string))
	}
	if t := settings.Text(v.ptr); t != "" {
		return strings.Split(t, ",")
	}
	return nil
}

func (v *settingValue) Replace(items []string) error {
	v.given = false
	reflect.ValueOf(v.ptr).Elem().SetZero()
	for _, it := range items {
		if err := v.Set(it); err != nil {
			return err
		}
	}
	return nil
}

func (v *settingValue) Append(item string) error { return v.Set(item) }

// registerSettings adds a flag for every setting declared in the struct
// cfg points to that stage reads, bound to its field; a setting of
// Options that the stage does not read is a hidden flag that fails,
// saying which stages read it.
func registerSettings(fs *pflag.FlagSet, cfg any, stage string) {
	for _, s := range settings.Table(cfg) {
		if !s.UsedBy(stage) {
			if _, isOptions := cfg.(*pipeline.Options); isOptions && stage != stageRun {
				refuseFlags(fs, elsewhere(s), []string{s.Key}, boolKeys(s)...)
			}
			continue
		}
		var value pflag.Value = &settingValue{s: s, ptr: s.Ptr(cfg)}
		help := s.Help + defaultText(s)
		if m, ok := s.Ptr(cfg).(*map[string]string); ok { // env-opt: pairs whose list values may hold "="
			value, help = &envOptsValue{m: m}, s.Help+envOptLists
		}
		f := fs.VarPF(value, s.Key, "", help)
		f.DefValue = "" // defaultText says it, per recipe
		if s.Type().Kind() == reflect.Bool {
			f.NoOptDefVal = "true"
		}
		_ = fs.SetAnnotation(s.Key, groupAnnotation, []string{s.Group})
	}
}

// boolKeys returns s's key when it is a boolean (a refused boolean flag
// may be given without a value).
func boolKeys(s settings.Setting) []string {
	if s.Type().Kind() == reflect.Bool {
		return []string{s.Key}
	}
	return nil
}

// elsewhere says where a setting a stage does not read belongs.
func elsewhere(s settings.Setting) string {
	why := "it is a setting of " + stagesText(s.Stages)
	if slices.Equal(s.Stages, []string{stageRun}) {
		why += "; in a distributed run each stage is started on its own (rspo serve actor adds an actor)"
	}
	return why
}

// stagesText names the commands whose stages read a setting.
func stagesText(stages []string) string {
	names := make([]string, len(stages))
	for i, st := range stages {
		names[i] = "rspo serve " + st
		if st == stageRun {
			names[i] = "rspo run"
		}
	}
	return strings.Join(names, " and ")
}

// defaultText is the help text's default of s: its derivation, its value
// under each recipe where recipes differ, or its one default; nothing
// for an empty default or false.
func defaultText(s settings.Setting) string {
	if s.Derived != "" {
		return " (default: " + s.Derived + ")"
	}
	recipes := pipeline.Recipes()
	if len(s.Recipes) > 0 {
		parts := make([]string, len(recipes))
		for i, r := range recipes {
			parts[i] = fmt.Sprintf("%s under %s", shownDefault(s.DefaultFor(r)), r)
		}
		return " (default " + strings.Join(parts, ", ") + ")"
	}
	if s.Default == "" || s.Default == "false" {
		return ""
	}
	return " (default " + s.Default + ")"
}

// shownDefault renders a default in the help text.
func shownDefault(v string) string {
	if v == "" {
		return `""`
	}
	return v
}

// groupTitles are the headings of the flag groups in --help, in order.
var groupTitles = []struct{ group, title string }{
	{"run", "Run"},
	{"algorithm", "Base algorithm"},
	{"rspo", "RSPO"},
	{"explorer", "Explorer"},
	{"prm", "Process reward model"},
	{"eval", "Evaluation"},
	{"scale", "Scale"},
	{"policy", "Policy backend"},
	{"", "Other"},
}

// groupedUsage prints a command's flags under the headings of their
// groups (settings' declared groups; flags of no group under "Other").
func groupedUsage(c *cobra.Command) error {
	w := c.OutOrStderr()
	fmt.Fprintf(w, "Usage:\n  %s\n", c.UseLine())
	if c.Example != "" {
		fmt.Fprintf(w, "\nExamples:\n%s\n", c.Example)
	}
	for _, g := range groupTitles {
		set := pflag.NewFlagSet(g.title, pflag.ContinueOnError)
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			group := ""
			if a := f.Annotations[groupAnnotation]; len(a) > 0 {
				group = a[0]
			}
			if group == g.group && !f.Hidden {
				set.AddFlag(f)
			}
		})
		if set.HasFlags() {
			fmt.Fprintf(w, "\n%s flags:\n%s", g.title, set.FlagUsages())
		}
	}
	if c.HasAvailableInheritedFlags() {
		fmt.Fprintf(w, "\nGlobal flags:\n%s", c.InheritedFlags().FlagUsages())
	}
	return nil
}

// defaultPolicySettings are the declared defaults of the policy backend's
// settings.
func defaultPolicySettings() pipeline.PolicySettings {
	var ps pipeline.PolicySettings
	settings.Defaults(&ps, "")
	return ps
}

// unusedKeys lists the keys of Options that stage does not read.
func unusedKeys(stage string) []string {
	var out []string
	for _, s := range settings.Table(&pipeline.Options{}) {
		if !s.UsedBy(stage) {
			out = append(out, s.Key)
		}
	}
	return out
}

// refuseUnusedKeys fails when a configuration file (path) sets a key its
// stage does not read, naming the stages that do.
func refuseUnusedKeys(path string, keys []string, stage string) error {
	for _, k := range keys {
		s, _, ok := settings.Lookup(&pipeline.Options{}, k)
		if ok && !s.UsedBy(stage) {
			return fmt.Errorf("--config %s: rspo serve %s does not use key %q: %s", path, stage, k, elsewhere(s))
		}
	}
	return nil
}
