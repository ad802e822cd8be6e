package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rspo-dev/rspo/envs"
)

// envOptsValue is the --env-opt flag of every command: KEY=VALUE, several
// pairs per flag separated by commas, the flag repeatable, a later pair
// overriding an earlier one of the same key. Unlike pflag's key=value
// list it knows the environments' declared options (envs.DeclareOptions),
// so a list option's items may hold "=" without quoting:
// `--env-opt preset=easy,task_types=pick_and_place=2,pick_two_and_place=1`
// is preset and task_types, because pick_two_and_place is not an option
// key. Fields in CSV quotes are taken whole, as before.
type envOptsValue struct {
	m *map[string]string
}

// envOptLists ends the help of --env-opt where a list option may be given:
// its items may hold "=".
const envOptLists = "; a list option's items may be weighted, e.g. task_types=pick_and_place=2,pick_two_and_place=1"

// envOptsVar adds --env-opt to fs, bound to *p.
func envOptsVar(fs *pflag.FlagSet, p *map[string]string, usage string) {
	fs.Var(&envOptsValue{m: p}, "env-opt", usage)
}

func (v *envOptsValue) Set(s string) error {
	pairs, err := parseEnvOpts(s)
	if err != nil {
		return err
	}
	if *v.m == nil {
		*v.m = make(map[string]string, len(pairs))
	}
	for k, val := range pairs {
		(*v.m)[k] = val
	}
	return nil
}

func (v *envOptsValue) Type() string { return "key=value" }

// String lists the pairs as one CSV record, each pair quoted where it
// holds a comma, so Set reads it back to the same options.
func (v *envOptsValue) String() string {
	if v.m == nil || len(*v.m) == 0 {
		return ""
	}
	keys := make([]string, 0, len(*v.m))
	for k := range *v.m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	records := make([]string, len(keys))
	for i, k := range keys {
		records[i] = k + "=" + (*v.m)[k]
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.Write(records) // a bytes.Buffer does not fail
	w.Flush()
	return strings.TrimSuffix(b.String(), "\n")
}

// parseEnvOpts reads one --env-opt value: comma-separated KEY=VALUE
// pairs. A field without "=" continues the previous pair's value
// (task_types=a,b), and so does, after a declared list option, a field
// whose key no environment declares (task_types=a=2,b=1).
func parseEnvOpts(s string) (map[string]string, error) {
	if s == "" {
		return nil, fmt.Errorf("an empty value: want KEY=VALUE, e.g. preset=easy")
	}
	fields, err := csv.NewReader(strings.NewReader(s)).Read()
	if err != nil {
		return nil, fmt.Errorf("%q: %w (quote a field with CSV double quotes)", s, err)
	}
	out := make(map[string]string, len(fields))
	key := ""
	for _, f := range fields {
		k, val, hasEq := strings.Cut(f, "=")
		if key != "" && (!hasEq || envs.IsListOption(key) && !envs.IsOptionKey(k)) {
			out[key] += "," + f
			continue
		}
		if !hasEq || k == "" {
			return nil, fmt.Errorf("%q: want KEY=VALUE, e.g. preset=easy", f)
		}
		key, out[k] = k, val
	}
	return out, nil
}
