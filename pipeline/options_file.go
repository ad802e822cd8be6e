package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/rspo-dev/rspo/settings"
	"gopkg.in/yaml.v3"
)

// Configuration files hold options as one JSON object or one YAML
// mapping whose keys are the flag names (the older snake_case keys still
// read). A file whose name ends in .yaml or .yml is YAML, any other JSON.
// Errors give the file's line and column and name the key.

// LoadOptionsFile reads the configuration file at path over o: keys it
// leaves out keep their value. It returns the keys the file sets, as the
// file spells them.
func LoadOptionsFile(path string, o *Options) ([]string, error) {
	f, err := ReadOptionsFile(path, o)
	if err != nil {
		return nil, err
	}
	return f.Keys, nil
}

// OptionsFile is what a configuration file set: its keys as the file
// spells them, and where each value stands, so that a value found wrong
// later (Validate) is reported at its line (Place).
type OptionsFile struct {
	Keys []string
	// Pos maps each key set (its current spelling) to name:line:column.
	Pos map[string]string
}

// ReadOptionsFile reads the configuration file at path over o, as
// LoadOptionsFile does, and says where each key stands.
func ReadOptionsFile(path string, o *Options) (*OptionsFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	s := newOptionSetter(o)
	if IsYAMLFile(path) {
		err = decodeYAMLDoc(path, b, s)
	} else {
		err = decodeJSONDoc(path, b, s)
	}
	if err != nil {
		return nil, err
	}
	return &OptionsFile{Keys: s.sortedKeys(), Pos: s.pos}, nil
}

// Place rewrites every settings.ValueError in err (a joined error too)
// whose key the file set as an error at the value's place in the file.
func (f *OptionsFile) Place(err error) error {
	if f == nil || err == nil {
		return err
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var errs []error
		for _, e := range joined.Unwrap() {
			errs = append(errs, f.Place(e))
		}
		return errors.Join(errs...)
	}
	var ve *settings.ValueError
	if errors.As(err, &ve) {
		if pos, ok := f.Pos[ve.Key]; ok && !strings.Contains(err.Error(), pos) {
			return fmt.Errorf("%s: %w", pos, err)
		}
	}
	return err
}

// IsYAMLFile reports whether path names a YAML configuration file.
func IsYAMLFile(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	return ext == ".yaml" || ext == ".yml"
}

// optionSetter applies the keys of one file to o, refusing unknown keys
// and two spellings of one option.
type optionSetter struct {
	o    *Options
	seen map[string]string // canonical key -> key as written
	keys []string
	// pos maps each canonical key set to the place of its value in the
	// file (name:line:column), for errors found later (Validate).
	pos map[string]string
	// refused are the values the settings' declarations refuse, each at
	// its place: reported together once the whole file is read.
	refused []error
}

func newOptionSetter(o *Options) *optionSetter {
	return &optionSetter{o: o, pos: map[string]string{}}
}

// field returns the setting stored under key as written in the file.
func (s *optionSetter) field(key string) (settings.Setting, error) {
	name, _ := CanonicalKey(key)
	if other, dup := s.seen[name]; dup {
		if other == key {
			return settings.Setting{}, fmt.Errorf("key %q is given twice", key)
		}
		return settings.Setting{}, fmt.Errorf("keys %q and %q are the same option; give one", other, key)
	}
	field, _, ok := settings.Lookup(s.o, name)
	if !ok {
		return settings.Setting{}, fmt.Errorf("unknown key %q (the keys are the flag names: %s)", key, strings.Join(OptionKeys(), ", "))
	}
	if s.seen == nil {
		s.seen = map[string]string{}
	}
	s.seen[name] = key
	s.keys = append(s.keys, key)
	return field, nil
}

// sortedKeys are the keys set, sorted.
func (s *optionSetter) sortedKeys() []string { return slices.Sorted(slices.Values(s.keys)) }

// position renders the place of byte offset off in b as name:line:column.
func position(name string, b []byte, off int64) string {
	off = max(0, min(off, int64(len(b))))
	before := b[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:]) + 1
	return fmt.Sprintf("%s:%d:%d", name, line, col)
}

// DecodeOptionsJSON reads a JSON object of options (the file name, for
// errors) over o and returns the keys it sets.
func DecodeOptionsJSON(name string, b []byte, o *Options) ([]string, error) {
	s := newOptionSetter(o)
	if err := decodeJSONDoc(name, b, s); err != nil {
		return nil, err
	}
	return s.sortedKeys(), nil
}

func decodeJSONDoc(name string, b []byte, s *optionSetter) error {
	f := jsonFile{name: name, b: b, dec: json.NewDecoder(bytes.NewReader(b))}
	if tok, err := f.dec.Token(); err != nil && !errors.Is(err, io.EOF) {
		return f.syntax(err)
	} else if tok != json.Delim('{') {
		return f.fail(f.dec.InputOffset(), "a configuration is a JSON object of flag names and values, not %s", describeJSON(tok))
	}
	for f.dec.More() {
		if err := f.decodeKey(s); err != nil {
			return err
		}
	}
	if _, err := f.dec.Token(); err != nil {
		return f.syntax(err)
	}
	if _, err := f.dec.Token(); !errors.Is(err, io.EOF) {
		return f.fail(f.dec.InputOffset(), "text after the configuration object")
	}
	return errors.Join(s.refused...)
}

// jsonFile is a JSON configuration being decoded.
type jsonFile struct {
	name string
	b    []byte
	dec  *json.Decoder
}

// fail returns an error placed at byte offset off.
func (f jsonFile) fail(off int64, format string, args ...any) error {
	return fmt.Errorf("pipeline: %s: %s", position(f.name, f.b, off), fmt.Sprintf(format, args...))
}

// syntax places a decoding error: a syntax error at its offset, a
// truncated file at its end.
func (f jsonFile) syntax(err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return f.fail(se.Offset, "%v", se)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return f.fail(int64(len(f.b)), "the file ends inside the configuration")
	}
	return f.fail(f.dec.InputOffset(), "%v", err)
}

// decodeKey reads one key and its value into s.
func (f jsonFile) decodeKey(s *optionSetter) error {
	keyOff := f.skipSeparators(f.dec.InputOffset())
	tok, err := f.dec.Token()
	if err != nil {
		return f.syntax(err)
	}
	key := tok.(string) // inside an object Token returns a key or fails
	var raw json.RawMessage
	if err := f.dec.Decode(&raw); err != nil {
		return f.syntax(err)
	}
	valueOff := f.dec.InputOffset() - int64(len(raw))
	field, err := s.field(key)
	if err != nil {
		return f.fail(keyOff, "%v", err)
	}
	s.pos[field.Key] = position(f.name, f.b, valueOff)
	if err := setJSON(s.o, field.Key, raw); err != nil {
		return f.fail(valueOff, "%v", strings.TrimPrefix(err.Error(), "pipeline: "))
	}
	s.checkGiven(field)
	return nil
}

// checkGiven notes a value the file gave that the setting's declaration
// refuses, at its place in the file.
func (s *optionSetter) checkGiven(field settings.Setting) {
	if err := field.CheckGiven(field.Ptr(s.o)); err != nil {
		ve := &settings.ValueError{Key: field.Key, Value: field.Value(s.o), Want: err.Error()}
		s.refused = append(s.refused, fmt.Errorf("pipeline: %s: %w", s.pos[field.Key], ve))
	}
}

// emptyToNil stores an empty list or mapping as none at all, the value
// the flags leave, so a run's recorded settings compare equal whichever
// way its options were given.
func emptyToNil(field any) {
	v := reflect.ValueOf(field).Elem()
	if (v.Kind() == reflect.Map || v.Kind() == reflect.Slice) && v.Len() == 0 {
		v.SetZero()
	}
}

// skipSeparators returns the offset of the first byte at or after off
// that is neither white space nor a comma: where the next key starts.
func (f jsonFile) skipSeparators(off int64) int64 {
	for off < int64(len(f.b)) && strings.IndexByte(" \t\r\n,", f.b[off]) >= 0 {
		off++
	}
	return off
}

// describeJSON names what a JSON document holds instead of an object.
func describeJSON(tok json.Token) string {
	switch v := tok.(type) {
	case nil:
		return "null or nothing"
	case json.Delim:
		return "an array"
	case string:
		return fmt.Sprintf("the string %q", v)
	}
	return fmt.Sprintf("%v", tok)
}

// isScalar reports whether field holds one number, string or boolean, for
// which null is not a value.
func isScalar(field any) bool {
	k := reflect.ValueOf(field).Elem().Kind()
	return k != reflect.Map && k != reflect.Slice
}

// DecodeOptionsYAML reads a YAML mapping of options (the file name, for
// errors) over o and returns the keys it sets.
func DecodeOptionsYAML(name string, b []byte, o *Options) ([]string, error) {
	s := newOptionSetter(o)
	if err := decodeYAMLDoc(name, b, s); err != nil {
		return nil, err
	}
	return s.sortedKeys(), nil
}

func decodeYAMLDoc(name string, b []byte, s *optionSetter) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return yamlSyntaxError(name, err)
	}
	if len(doc.Content) == 0 {
		return nil // an empty file sets nothing
	}
	return decodeYAMLMapping(name, doc.Content[0], s)
}

// yamlSyntaxError places a YAML parse error ("yaml: line 3: ...") as
// name:3: ...; the parser gives lines, not columns.
func yamlSyntaxError(name string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if line, why, ok := strings.Cut(rest, ": "); ok {
			return fmt.Errorf("pipeline: %s:%s: %s", name, line, why)
		}
	}
	return fmt.Errorf("pipeline: %s: %s", name, msg)
}

// UnmarshalYAML reads a YAML mapping of options over o, as a
// configuration file does.
func (o *Options) UnmarshalYAML(n *yaml.Node) error {
	return decodeYAMLMapping("yaml", n, newOptionSetter(o))
}

func decodeYAMLMapping(name string, n *yaml.Node, s *optionSetter) error {
	fail := func(at *yaml.Node, format string, args ...any) error {
		return fmt.Errorf("pipeline: %s:%d:%d: %s", name, at.Line, at.Column, fmt.Sprintf(format, args...))
	}
	if n.Kind != yaml.MappingNode {
		return fail(n, "a configuration is a mapping of flag names to values")
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return fail(k, "a key is a flag name")
		}
		field, err := s.field(k.Value)
		if err != nil {
			return fail(k, "%v", err)
		}
		s.pos[field.Key] = fmt.Sprintf("%s:%d:%d", name, v.Line, v.Column)
		if !yamlSet(field, s.o, v) {
			return fail(v, "key %q: %s is not %s", k.Value, yamlText(v), settings.Kind(field.Type()))
		}
		s.checkGiven(field)
	}
	return errors.Join(s.refused...)
}

// yamlSet reads node n into the setting field of o, reporting whether n
// holds a value of its kind: a duration as Go writes one ("90s").
func yamlSet(field settings.Setting, o *Options, n *yaml.Node) bool {
	ptr := field.Ptr(o)
	if settings.IsDuration(field.Type()) {
		return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" && settings.Set(ptr, n.Value) == nil
	}
	if !yamlFits(ptr, n) || n.Decode(ptr) != nil {
		return false
	}
	emptyToNil(ptr)
	return true
}

// yamlFits reports whether node n holds a value of field's kind, so that
// YAML's lenient conversions (1.5 into an integer, "yes" into a boolean)
// are refused as JSON refuses them.
func yamlFits(field any, n *yaml.Node) bool {
	tag := n.ShortTag()
	switch reflect.ValueOf(field).Elem().Kind() {
	case reflect.Int, reflect.Int64:
		return tag == "!!int"
	case reflect.Float64:
		return tag == "!!int" || tag == "!!float"
	case reflect.Bool:
		return tag == "!!bool"
	case reflect.String:
		return n.Kind == yaml.ScalarNode && tag != "!!null"
	case reflect.Map:
		return n.Kind == yaml.MappingNode || tag == "!!null"
	case reflect.Slice:
		return n.Kind == yaml.SequenceNode || tag == "!!null"
	}
	return false
}

// yamlText shows a node's value in an error message.
func yamlText(n *yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.ShortTag() == "!!str" {
			return fmt.Sprintf("%q", n.Value)
		}
		return n.Value
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return "this value"
}

// Effective returns the options a run actually uses: the derived counts
// filled in (Resolved), rspo off under dense-only, and the run's name.
func (o Options) Effective() Options {
	o = o.Resolved()
	if o.DenseOnly {
		o.RSPO = false
	}
	o.Run = o.RunName()
	return o
}

// MarshalYAML renders o as a mapping of flag names to values, in the
// order of OptionKeys.
func (o Options) MarshalYAML() (any, error) { return o.yamlNode(nil) }

// EncodeYAML writes o to w as a YAML configuration file, leaving out the
// keys in omit.
func (o Options) EncodeYAML(w io.Writer, omit ...string) error {
	n, err := o.yamlNode(omit)
	if err != nil {
		return err
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return fmt.Errorf("pipeline: options as YAML: %w", err)
	}
	return enc.Close()
}

func (o Options) yamlNode(omit []string) (*yaml.Node, error) {
	m := &yaml.Node{Kind: yaml.MappingNode}
	for _, st := range settings.Table(&o) {
		key := st.Key
		if slices.Contains(omit, key) {
			continue
		}
		var v yaml.Node
		value := reflect.ValueOf(st.Ptr(&o)).Elem().Interface()
		if settings.IsDuration(st.Type()) {
			value = st.Value(&o)
		}
		if err := v.Encode(value); err != nil {
			return nil, fmt.Errorf("pipeline: option %s as YAML: %w", key, err)
		}
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, &v)
	}
	return m, nil
}
