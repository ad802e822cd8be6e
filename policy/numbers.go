package policy

import "strconv"

// number is a number of a text ("60.00", "45.99", "7") and the hash of
// the word before it ("than" in "price lower than 60.00 dollars").
type number struct {
	before uint64
	val    float64
}

// appendNumbers appends the numbers that stand as words in text[start:end]:
// digits, with the fraction after a point right behind them ("45.99";
// tokenize ends a sentence at that point, so the fraction may lie past
// end). The numbers are read from the text only where they are compared
// (numberIDs): every state tokenises its text, few compare numbers.
func appendNumbers(text string, start, end int, dst []number) []number {
	var before uint64
	for i := start; i < end; {
		if !isWordByte(text[i]) {
			i++
			continue
		}
		h, num, j := scanWord(text, i)
		if !num {
			before, i = h, j
			continue
		}
		if isFraction(text, i) { // read with the number before its point
			i = j
			continue
		}
		if j+1 < len(text) && text[j] == '.' && isDigit(text[j+1]) {
			for j++; j < len(text) && isDigit(text[j]); j++ {
			}
		}
		v, _ := strconv.ParseFloat(text[i:j], 64) // digits only: at worst ±Inf for a huge number
		dst = append(dst, number{before: before, val: v})
		i = j
	}
	return dst
}

// sentenceStarts appends where each sentence of text begins, counting
// sentences as tokenize does.
func sentenceStarts(text string, dst []int) []int {
	dst = append(dst, 0)
	for i := 0; i < len(text); i++ {
		if isSentenceEnd(text[i]) {
			dst = append(dst, i+1)
		}
	}
	return dst
}

// isFraction reports whether the digits at text[i] follow a point that
// follows a word of digits ("99" of "45.99").
func isFraction(text string, i int) bool {
	if i < 2 || text[i-1] != '.' || !isDigit(text[i-2]) {
		return false
	}
	k := i - 2
	for k > 0 && isWordByte(text[k-1]) {
		if !isDigit(text[k-1]) {
			return false
		}
		k--
	}
	return true
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }
