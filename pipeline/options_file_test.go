package pipeline

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestDecodeOptionsFiles(t *testing.T) {
	tests := []struct {
		name, file, text string
		check            func(Options) bool
		keys             []string
	}{
		{"yaml flag names", "run.yaml", "env: shop\nk: 5\nalpha: 0.25\nenv-opt:\n  preset: easy\neval-splits: [train]\nrspo: false\n",
			func(o Options) bool {
				return o.Env == "shop" && o.K == 5 && o.Alpha == 0.25 && o.EnvOptions["preset"] == "easy" &&
					reflect.DeepEqual(o.EvalSplits, []string{"train"}) && !o.RSPO && o.Updates == 30
			}, []string{"alpha", "env", "env-opt", "eval-splits", "k", "rspo"}},
		{"yaml older keys", "run.yml", "group_size: 4\nalpha: 1\n", func(o Options) bool { return o.GroupSize == 4 && o.Alpha == 1 },
			[]string{"alpha", "group_size"}},
		{"yaml number as run name", "run.yaml", "run: 123\n", func(o Options) bool { return o.Run == "123" }, []string{"run"}},
		{"yaml empty file", "run.yaml", "", func(o Options) bool { return reflect.DeepEqual(o, DefaultOptions()) }, nil},
		{"json", "run.json", `{"env": "shop", "seed": 7, "eval-splits": []}`,
			func(o Options) bool { return o.Env == "shop" && o.Seed == 7 && o.EvalSplits == nil }, []string{"env", "eval-splits", "seed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOptions()
			keys, err := decodeFile(tt.file, tt.text, &o)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(o) {
				t.Errorf("decoded %+v", o)
			}
			if !reflect.DeepEqual(keys, tt.keys) {
				t.Errorf("keys %v, want %v", keys, tt.keys)
			}
		})
	}
}

func decodeFile(name, text string, o *Options) ([]string, error) {
	if IsYAMLFile(name) {
		return DecodeOptionsYAML(name, []byte(text), o)
	}
	return DecodeOptionsJSON(name, []byte(text), o)
}

// Malformed files are refused with the file, line and column, naming the
// key, never a Go field or type.
func TestDecodeOptionsFileErrors(t *testing.T) {
	tests := []struct{ name, file, text, want string }{
		{"yaml fraction for a count", "r.yaml", "env: shop\nk: 1.5\n", `r.yaml:2:4: key "k": 1.5 is not an integer`},
		{"yaml yes for a switch", "r.yaml", "rspo: yes\n", `r.yaml:1:7: key "rspo": "yes" is not true or false`},
		{"yaml null for a number", "r.yaml", "alpha: ~\n", `r.yaml:1:8: key "alpha": ~ is not a number`},
		{"yaml list for a string", "r.yaml", "env:\n  - shop\n", `r.yaml:2:3: key "env": a list is not a string`},
		{"yaml unknown key", "r.yaml", "env: shop\n  \ngroups: 4\n", `r.yaml:3:1: unknown key "groups"`},
		{"yaml key twice", "r.yaml", "k: 1\nk: 2\n", `r.yaml:2:1: key "k" is given twice`},
		{"yaml two spellings", "r.yaml", "group: 4\ngroup_size: 4\n", `r.yaml:2:1: keys "group" and "group_size" are the same option`},
		{"yaml not a mapping", "r.yaml", "- env\n", "r.yaml:1:1: a configuration is a mapping"},
		{"yaml syntax", "r.yaml", "env: shop\n  k: 2\n", "r.yaml:2: mapping values are not allowed"},
		{"json string for a count", "r.json", "{\n  \"k\": \"x\"\n}", `r.json:2:8: key "k": "x" is not an integer`},
		{"json unknown key", "r.json", "{\"env\": \"shop\",\n \"groups\": 4}", `r.json:2:2: unknown key "groups"`},
		{"json key twice", "r.json", `{"k": 1, "k": 2}`, `r.json:1:10: key "k" is given twice`},
		{"json syntax", "r.json", "{\n  \"k\": 1,,\n}", "r.json:2:10: invalid character ','"},
		{"json truncated", "r.json", "{\"k\": 1", "r.json:1:8: the file ends inside"},
		{"json array", "r.json", "[1]", "r.json:1:2: a configuration is a JSON object of flag names and values, not an array"},
		{"json trailing text", "r.json", "{} {}", "r.json:1:5: text after the configuration object"},
		{"json null for a count", "r.json", `{"k": null}`, `r.json:1:7: key "k": null is not an integer`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOptions()
			_, err := decodeFile(tt.file, tt.text, &o)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error with %q", err, tt.want)
			}
			for _, goName := range []string{"Options", "int64", "float64", "K ", "GroupSize"} {
				if strings.Contains(err.Error(), goName) {
					t.Errorf("error %q names the Go %q", err, goName)
				}
			}
		})
	}
}

// The YAML printed for a run reads back as the same options, with the
// same recorded settings, so it can be given back with --config.
func TestEffectiveOptionsYAMLRoundTrip(t *testing.T) {
	o := DefaultOptions()
	o.Env, o.EnvOptions, o.DenseOnly, o.EvalSplits = "shop", map[string]string{"preset": "easy"}, true, []string{"train"}
	want := o.Effective()
	var b bytes.Buffer
	if err := want.EncodeYAML(&b); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"run: shop-easy-grpo-dense-s1\n", "rspo: false\n", "explore-group: 4\n", "keep-versions: 6\n", "  preset: easy\n"} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("YAML lacks %q:\n%s", line, b.String())
		}
	}
	got := Options{}
	if _, err := DecodeOptionsYAML("config.yaml", b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back %+v\nwant %+v", got, want)
	}
	var viaYAML Options
	if err := yaml.Unmarshal(b.Bytes(), &viaYAML); err != nil || !reflect.DeepEqual(viaYAML, want) {
		t.Errorf("yaml.Unmarshal: %v, %+v", err, viaYAML)
	}
	plain := DefaultOptions().Effective()
	b.Reset()
	if err := plain.EncodeYAML(&b, "actors", "data"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "actors:") || strings.Contains(b.String(), "data:") {
		t.Errorf("omitted keys printed:\n%s", b.String())
	}
	back := DefaultOptions()
	if _, err := DecodeOptionsYAML("c.yaml", b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if diff := settingsDiff(back.Settings(), DefaultOptions().Settings()); len(diff) > 0 {
		t.Errorf("settings read back differ: %v", diff)
	}
}
