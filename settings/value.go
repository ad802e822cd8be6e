package settings

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// durationType is time.Duration, whose settings read and print as Go
// durations ("90s", "1m30s").
var durationType = reflect.TypeOf(time.Duration(0))

// IsDuration reports whether t is time.Duration.
func IsDuration(t reflect.Type) bool { return t == durationType }

// kindSupported reports whether a field of type t can hold a setting.
func kindSupported(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Float64, reflect.Bool, reflect.String:
		return true
	case reflect.Slice:
		return t.Elem().Kind() == reflect.String
	case reflect.Map:
		return t.Key().Kind() == reflect.String && t.Elem().Kind() == reflect.String
	}
	return false
}

// Kind describes the values a setting of type t takes, for messages.
func Kind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int64:
		if t == durationType {
			return "a duration such as 90s"
		}
		return "an integer"
	case reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Slice:
		return "a list of strings"
	case reflect.Map:
		return "a mapping of names to strings"
	}
	return t.String()
}

// Set parses text into the value ptr points to: numbers and booleans as
// Go writes them, a list as comma-separated items, a mapping as
// comma-separated key=value pairs; "" is an empty list or mapping.
func Set(ptr any, text string) error {
	v := reflect.ValueOf(ptr).Elem()
	if v.Type() == durationType {
		d, err := time.ParseDuration(text)
		if err != nil {
			return fmt.Errorf("%q is not a duration such as 90s", text)
		}
		v.SetInt(int64(d))
		return nil
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(text, 10, v.Type().Bits())
		if err != nil {
			return fmt.Errorf("%q is not an integer", text)
		}
		v.SetInt(n)
	case reflect.Float64:
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", text)
		}
		v.SetFloat(f)
	case reflect.Bool:
		b, err := strconv.ParseBool(text)
		if err != nil {
			return fmt.Errorf("%q is not true or false", text)
		}
		v.SetBool(b)
	case reflect.String:
		v.SetString(text)
	case reflect.Slice:
		return setList(v, text)
	case reflect.Map:
		return setMap(v, text)
	default:
		return fmt.Errorf("settings: cannot set a %v", v.Type())
	}
	return nil
}

func setList(v reflect.Value, text string) error {
	if text == "" {
		v.SetZero()
		return nil
	}
	items := strings.Split(text, ",")
	s := reflect.MakeSlice(v.Type(), len(items), len(items))
	for i, it := range items {
		s.Index(i).SetString(it)
	}
	v.Set(s)
	return nil
}

func setMap(v reflect.Value, text string) error {
	if text == "" {
		v.SetZero()
		return nil
	}
	m := reflect.MakeMap(v.Type())
	for _, pair := range strings.Split(text, ",") {
		k, val, ok := strings.Cut(pair, "=")
		if !ok || k == "" {
			return fmt.Errorf("%q is not KEY=VALUE", pair)
		}
		m.SetMapIndex(reflect.ValueOf(k).Convert(v.Type().Key()), reflect.ValueOf(val).Convert(v.Type().Elem()))
	}
	v.Set(m)
	return nil
}

// Text renders the value ptr points to as Set reads it (lists and
// mappings comma-separated, mapping keys sorted).
func Text(ptr any) string {
	v := reflect.ValueOf(ptr).Elem()
	if v.Type() == durationType {
		return time.Duration(v.Int()).String()
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.String:
		return v.String()
	case reflect.Slice:
		items := make([]string, v.Len())
		for i := range items {
			items[i] = v.Index(i).String()
		}
		return strings.Join(items, ",")
	case reflect.Map:
		var pairs []string
		for _, k := range v.MapKeys() {
			pairs = append(pairs, k.String()+"="+v.MapIndex(k).String())
		}
		slices.Sort(pairs)
		return strings.Join(pairs, ",")
	}
	return fmt.Sprint(v.Interface())
}

// ValueError is a setting whose value its declaration refuses.
type ValueError struct {
	// Key is the setting's key.
	Key string
	// Value is the refused value, as text.
	Value string
	// Want says what the setting takes.
	Want string
}

func (e *ValueError) Error() string {
	return fmt.Sprintf("settings: %s %s: want %s", e.Key, e.Value, e.Want)
}

// Validate checks every setting of the struct v points to against its
// declaration and reports every refused value (as *ValueError), joined.
func Validate(v any) error {
	var errs []error
	for _, s := range Table(v) {
		if err := s.check(s.Ptr(v)); err != nil {
			errs = append(errs, &ValueError{Key: s.Key, Value: Text(s.Ptr(v)), Want: err.Error()})
		}
	}
	return errors.Join(errs...)
}

// Check returns what the setting should be when the value ptr points to
// is refused, or nil.
func (s Setting) Check(ptr any) error { return s.check(ptr) }

// CheckGiven is Check for a value the user gave: a count must be at
// least 1 even where 0 stands for a derived default, which is left unsaid.
func (s Setting) CheckGiven(ptr any) error {
	v := reflect.ValueOf(ptr).Elem()
	if s.Count && (v.Kind() == reflect.Int || v.Kind() == reflect.Int64) && v.Int() < 1 {
		if s.Derived != "" {
			return fmt.Errorf("a count of at least 1 (leave it out for the default, %s)", s.Derived)
		}
		return errors.New("a count of at least 1")
	}
	return s.check(ptr)
}

// check returns what the value ptr points to should be, or nil.
func (s Setting) check(ptr any) error {
	v := reflect.ValueOf(ptr).Elem()
	switch v.Kind() {
	case reflect.Int, reflect.Int64:
		return s.checkNumber(float64(v.Int()))
	case reflect.Float64:
		if math.IsNaN(v.Float()) || math.IsInf(v.Float(), 0) {
			return errors.New("a finite number")
		}
		return s.checkNumber(v.Float())
	case reflect.String:
		if len(s.Enum) > 0 && !slices.Contains(s.Enum, v.String()) {
			return fmt.Errorf("one of %s", strings.Join(s.Enum, ", "))
		}
	case reflect.Slice:
		for i := range v.Len() {
			if it := v.Index(i).String(); len(s.Enum) > 0 && !slices.Contains(s.Enum, it) {
				return fmt.Errorf("items among %s", strings.Join(s.Enum, ", "))
			}
		}
	}
	return nil
}

func (s Setting) checkNumber(x float64) error {
	switch {
	case s.Count && s.Derived != "" && x < 0:
		return fmt.Errorf("a count of at least 1, or 0 for the derived default (%s)", s.Derived)
	case s.Count && s.Derived == "" && x < 1:
		return errors.New("a count of at least 1")
	case s.Above != nil && !(x > *s.Above):
		return fmt.Errorf("a number above %g", *s.Above)
	case s.Min != nil && x < *s.Min:
		return fmt.Errorf("%s", s.rangeText())
	case s.Max != nil && x > *s.Max:
		return fmt.Errorf("%s", s.rangeText())
	}
	return nil
}

// rangeText describes the setting's inclusive range.
func (s Setting) rangeText() string {
	switch {
	case s.Min != nil && s.Max != nil:
		return fmt.Sprintf("a number from %g to %g", *s.Min, *s.Max)
	case s.Min != nil:
		return fmt.Sprintf("at least %g", *s.Min)
	case s.Max != nil:
		return fmt.Sprintf("at most %g", *s.Max)
	}
	return "any number"
}
