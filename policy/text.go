package policy

// Text handling for the features: tokens are maximal runs of ASCII letters,
// digits and non-ASCII bytes, lowercased, identified by a 64-bit hash so that
// no strings are allocated on the hot path.

// token is one word of a text.
type token struct {
	h    uint64 // hash of the lowercased word
	num  bool   // the word is all digits
	stop bool   // the word is a stop word
	sent int32  // index of the sentence the word is in
}

// content reports whether the token carries meaning on its own.
func (t token) content() bool { return !t.num && !t.stop }

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// isWordByte reports whether b belongs to a word.
func isWordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b >= 0x80
}

// isSentenceEnd reports whether b ends a sentence.
func isSentenceEnd(b byte) bool { return b == '.' || b == '!' || b == '?' || b == '\n' }

// tokenize appends the tokens of text to dst.
func tokenize(text string, dst []token) []token {
	var sent int32
	for i := 0; i < len(text); {
		b := text[i]
		if !isWordByte(b) {
			if isSentenceEnd(b) {
				sent++
			}
			i++
			continue
		}
		var h uint64
		var num bool
		h, num, i = scanWord(text, i)
		dst = append(dst, token{h: h, num: num, stop: isStopWord(h), sent: sent})
	}
	return dst
}

// scanWord reads the word that starts at text[i]: its hash (lowercased),
// whether it is all digits, and where it ends.
func scanWord(text string, i int) (h uint64, num bool, end int) {
	h, num = fnvOffset, true
	for ; i < len(text) && isWordByte(text[i]); i++ {
		c := text[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		num = num && c >= '0' && c <= '9'
		h = (h ^ uint64(c)) * fnvPrime
	}
	return h, num, i
}

// hashWord is the token hash of a single lowercase word.
func hashWord(w string) uint64 {
	h := uint64(fnvOffset)
	for i := 0; i < len(w); i++ {
		h = (h ^ uint64(w[i])) * fnvPrime
	}
	return h
}

// mix combines two hashes, order-sensitively.
func mix(a, b uint64) uint64 {
	x := a*0xff51afd7ed558ccd ^ (b + 0x9e3779b97f4a7c15 + a<<6 + a>>2)
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// stopWords are words that carry no meaning on their own in instructions
// and actions; they still take part in bigrams.
var stopWords = []string{
	"a", "an", "the", "in", "on", "to", "of", "and", "some", "it", "is",
	"you", "your", "with", "from", "at", "for", "into", "onto", "this",
	"that", "are", "there", "then", "as", "by", "be", "or", "i", "me",
}

// stopTable holds the hashes of stopWords in an open-addressing table:
// every token is looked up, and a probe or two is far cheaper than a map
// access. No word hashes to 0, the empty slot.
var stopTable = func() (t [128]uint64) {
	for _, w := range stopWords {
		h := hashWord(w)
		i := stopSlot(h)
		for t[i] != 0 && t[i] != h {
			i = (i + 1) % len(t)
		}
		t[i] = h
	}
	return t
}()

func stopSlot(h uint64) int { return int((h * 0x9e3779b97f4a7c15) >> 57) }

// isStopWord reports whether h is the hash of a stop word.
func isStopWord(h uint64) bool {
	for i := stopSlot(h); stopTable[i] != 0; i = (i + 1) % len(stopTable) {
		if stopTable[i] == h {
			return true
		}
	}
	return false
}

// entities appends the hashes of the entities in toks — a content word
// followed by a number, such as "apple 1" — to dst. Each entity carries the
// sentence it occurs in and the hash of its word.
func entities(toks []token, dst []entity) []entity {
	for i := 0; i+1 < len(toks); i++ {
		if toks[i].content() && toks[i+1].num {
			dst = append(dst, entity{h: mix(toks[i].h, toks[i+1].h), word: toks[i].h, sent: toks[i].sent})
		}
	}
	return dst
}

// entity is a named, numbered object or place in a text.
type entity struct {
	h    uint64
	word uint64
	sent int32
}
