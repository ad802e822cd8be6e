package shop

import (
	"strings"
	"unicode"
)

// tokenize lowercases s and splits it into runs of letters and digits:
// "T-Shirt, 18x18 Inch" → [t shirt 18x18 inch].
func tokenize(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// titleCase upper-cases the first letter of every space-separated word.
func titleCase(s string) string {
	words := strings.Fields(s)
	for i, w := range words {
		words[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	return strings.Join(words, " ")
}

// joinAnd joins items as "a", "a and b" or "a, b and c".
func joinAnd(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// article returns the indefinite article for phrase: "" for a plural type
// name, "an" before a, e, i or o, "a" otherwise ("a usb c charger").
func article(phrase string, plural bool) string {
	switch {
	case plural:
		return ""
	case phrase != "" && strings.ContainsRune("aeio", rune(phrase[0])):
		return "an"
	}
	return "a"
}
