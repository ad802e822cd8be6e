package settings_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/settings"
)

type inner struct {
	Tilt float64 `setting:"tilt" alias:"old_tilt" default:"0" recipe:"fast=10;slow=1" min:"0" max:"100" group:"explorer" stages:"learner" help:"the tilt"`
}

type config struct {
	Name    string            `setting:"name" default:"a" enum:"a|b" help:"a name"`
	Count   int               `setting:"count" default:"3" count:"true" help:"a count"`
	Derived int               `setting:"derived" derived:"count+1" count:"true" help:"a derived count"`
	Rate    float64           `setting:"rate" default:"0.5" above:"0" help:"a rate"`
	Wait    time.Duration     `setting:"wait" default:"1m30s" help:"a wait"`
	List    []string          `setting:"list" default:"x,y" help:"a list"`
	Opts    map[string]string `setting:"opts" default:"" help:"options"`
	Inner   inner             `setting:",inline"`
	Ignored int
}

func TestDefaultsAndRecipes(t *testing.T) {
	var c config
	settings.Defaults(&c, "")
	want := config{Name: "a", Count: 3, Rate: 0.5, Wait: 90 * time.Second, List: []string{"x", "y"}}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("defaults: got %+v, want %+v", c, want)
	}
	settings.Defaults(&c, "fast")
	if c.Inner.Tilt != 10 {
		t.Errorf("defaults under recipe fast: tilt %v, want 10", c.Inner.Tilt)
	}
	settings.Defaults(&c, "")
	settings.ApplyRecipe(&c, "slow", func(key string) bool { return false })
	if c.Inner.Tilt != 1 {
		t.Errorf("recipe slow: tilt %v, want 1", c.Inner.Tilt)
	}
	c.Inner.Tilt = 7
	settings.ApplyRecipe(&c, "fast", func(key string) bool { return key == "tilt" })
	if c.Inner.Tilt != 7 {
		t.Errorf("a given setting was replaced by the recipe: tilt %v, want 7", c.Inner.Tilt)
	}
	if got := settings.Recipes(&c); !reflect.DeepEqual(got, []string{"fast", "slow"}) {
		t.Errorf("recipes %v", got)
	}
}

func TestTextRoundTrip(t *testing.T) {
	var c config
	settings.Defaults(&c, "")
	c.Opts = map[string]string{"b": "2", "a": "1"}
	for _, s := range settings.Table(&c) {
		text := s.Value(&c)
		p := reflect.New(s.Type())
		if err := settings.Set(p.Interface(), text); err != nil {
			t.Fatalf("%s: %q does not read back: %v", s.Key, text, err)
		}
		if got := settings.Text(p.Interface()); got != text {
			t.Errorf("%s: %q reads back as %q", s.Key, text, got)
		}
	}
	if got := settings.Text(&c.Opts); got != "a=1,b=2" {
		t.Errorf("mapping text %q, want sorted pairs", got)
	}
}

func TestValidateNamesEveryRefusedValue(t *testing.T) {
	var c config
	settings.Defaults(&c, "")
	c.Name, c.Count, c.Rate, c.Inner.Tilt, c.Derived = "z", 0, 0, 1e308, 0
	err := settings.Validate(&c)
	for _, want := range []string{"name z: want one of a, b", "count 0: want a count of at least 1", "rate 0: want a number above 0", "tilt 1e+308: want a number from 0 to 100"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want it to say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "derived") {
		t.Errorf("a derived count of 0 (its default) was refused: %v", err)
	}
	var ve *settings.ValueError
	if !errors.As(err, &ve) || ve.Key == "" {
		t.Errorf("errors do not carry their key: %v", err)
	}
	s, _, _ := settings.Lookup(&c, "derived")
	zero := 0
	if err := s.CheckGiven(&zero); err == nil {
		t.Error("a derived count given as 0 was accepted: a zero must never stand for the default")
	}
}

func TestLookupReadsAliases(t *testing.T) {
	s, alias, ok := settings.Lookup(&config{}, "old_tilt")
	if !ok || !alias || s.Key != "tilt" {
		t.Errorf("old_tilt: got %q alias %v ok %v, want tilt", s.Key, alias, ok)
	}
	if _, _, ok := settings.Lookup(&config{}, "Ignored"); ok {
		t.Error("a field without a setting tag is a setting")
	}
}

func TestMalformedDeclarationsAreRefused(t *testing.T) {
	for name, typ := range map[string]any{
		"default out of range": struct {
			X int `setting:"x" default:"0" count:"true" help:"x"`
		}{},
		"no help": struct {
			X int `setting:"x" default:"1"`
		}{},
		"recipe value not in enum": struct {
			X string `setting:"x" default:"a" enum:"a|b" recipe:"r=c" help:"x"`
		}{},
		"duplicate key": struct {
			X int `setting:"x" default:"1" help:"x"`
			Y int `setting:"x" default:"1" help:"y"`
		}{},
		"unsupported type": struct {
			X []int `setting:"x" default:"" help:"x"`
		}{},
	} {
		if _, err := settings.TableOf(reflect.TypeOf(typ)); err == nil {
			t.Errorf("%s: declaration accepted", name)
		}
	}
}
