package shop

import (
	"math"
	"sort"
	"sync"
)

// BM25 parameters (Robertson & Zaragoza's usual values, as in Lucene).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// bm25 is an Okapi BM25 ranking over a fixed set of documents with an
// inverted index built once. It is safe for concurrent searches.
type bm25 struct {
	terms    map[string]int32
	postings [][]posting // by term id
	docLen   []float64
	avgLen   float64
	scratch  sync.Pool // *searchScratch
}

// posting records that a term occurs tf times in doc.
type posting struct {
	doc int32
	tf  int32
}

// hit is one ranked document.
type hit struct {
	doc   int32
	score float64
}

// searchScratch is the per-search accumulator, pooled to avoid allocation.
type searchScratch struct {
	scores  []float64
	touched []int32
}

// newBM25 indexes docs; document i is identified by i in results.
func newBM25(docs []string) *bm25 {
	ix := &bm25{terms: map[string]int32{}, docLen: make([]float64, len(docs))}
	total := 0.0
	for d, text := range docs {
		toks := tokenize(text)
		ix.docLen[d] = float64(len(toks))
		total += float64(len(toks))
		ix.addDoc(int32(d), toks)
	}
	if len(docs) > 0 {
		ix.avgLen = total / float64(len(docs))
	}
	n := len(docs)
	ix.scratch.New = func() any { return &searchScratch{scores: make([]float64, n)} }
	return ix
}

// addDoc adds the term frequencies of one document to the postings.
func (ix *bm25) addDoc(doc int32, toks []string) {
	counts := map[string]int32{}
	order := make([]string, 0, len(toks))
	for _, t := range toks {
		if counts[t] == 0 {
			order = append(order, t)
		}
		counts[t]++
	}
	for _, t := range order {
		id, ok := ix.terms[t]
		if !ok {
			id = int32(len(ix.postings))
			ix.terms[t] = id
			ix.postings = append(ix.postings, nil)
		}
		ix.postings[id] = append(ix.postings[id], posting{doc: doc, tf: counts[t]})
	}
}

// idf is the (always positive) Lucene form ln(1 + (N − df + 0.5)/(df + 0.5)).
func (ix *bm25) idf(df int) float64 {
	n := float64(len(ix.docLen))
	return math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5))
}

// termScore is one term's contribution to a document of length dl.
func (ix *bm25) termScore(idf float64, tf int32, dl float64) float64 {
	f := float64(tf)
	return idf * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*dl/ix.avgLen))
}

// queryTerms returns the distinct indexed terms of query, in order.
func (ix *bm25) queryTerms(query string) []int32 {
	var ids []int32
	for _, t := range tokenize(query) {
		id, ok := ix.terms[t]
		if ok && !containsID(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

func containsID(ids []int32, id int32) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// score returns the BM25 score of one document for query.
func (ix *bm25) score(query string, doc int) float64 {
	s := 0.0
	for _, id := range ix.queryTerms(query) {
		ps := ix.postings[id]
		for _, p := range ps {
			if int(p.doc) == doc {
				s += ix.termScore(ix.idf(len(ps)), p.tf, ix.docLen[doc])
			}
		}
	}
	return s
}

// search returns up to limit documents with a positive score for query,
// best first; equal scores rank the lower document id first.
func (ix *bm25) search(query string, limit int) []hit {
	sc := ix.scratch.Get().(*searchScratch)
	defer ix.scratch.Put(sc)
	for _, id := range ix.queryTerms(query) {
		ps := ix.postings[id]
		idf := ix.idf(len(ps))
		for _, p := range ps {
			if sc.scores[p.doc] == 0 {
				sc.touched = append(sc.touched, p.doc)
			}
			sc.scores[p.doc] += ix.termScore(idf, p.tf, ix.docLen[p.doc])
		}
	}
	top := make([]hit, 0, limit)
	for _, d := range sc.touched {
		top = insertTop(top, hit{doc: d, score: sc.scores[d]}, limit)
		sc.scores[d] = 0
	}
	sc.touched = sc.touched[:0]
	return top
}

// better orders hits: higher score first, then lower document id.
func better(a, b hit) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return a.doc < b.doc
}

// insertTop inserts h into the sorted top list, keeping at most limit hits.
func insertTop(top []hit, h hit, limit int) []hit {
	if limit <= 0 || (len(top) == limit && !better(h, top[len(top)-1])) {
		return top
	}
	i := sort.Search(len(top), func(i int) bool { return better(h, top[i]) })
	if len(top) < limit {
		top = append(top, hit{})
	}
	copy(top[i+1:], top[i:len(top)-1])
	top[i] = h
	return top
}
