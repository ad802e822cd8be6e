package llm

import (
	"container/list"
	"sync"
	"sync/atomic"
)

// featureKey is a 128-bit hash of a step's rendered text.
type featureKey [2]uint64

// featureCache is a bounded LRU of feature vectors, split into shards
// (each its own LRU under its own lock) so concurrent rollouts rarely wait
// on one another. It holds at most its capacity in all; the vectors it
// hands out and takes in are never modified.
type featureCache struct {
	shards       []cacheShard
	hits, misses atomic.Uint64
}

type cacheShard struct {
	mu    sync.Mutex
	cap   int
	order *list.List // front: most recently used; values are *cacheEntry
	items map[featureKey]*list.Element
}

type cacheEntry struct {
	key featureKey
	vec []float32
}

// maxCacheShards bounds the shards of a featureCache.
const maxCacheShards = 16

// newFeatureCache returns a cache of capacity entries, or nil (no caching)
// for capacity 0.
func newFeatureCache(capacity int) *featureCache {
	if capacity <= 0 {
		return nil
	}
	n := min(maxCacheShards, capacity)
	c := &featureCache{shards: make([]cacheShard, n)}
	for i := range c.shards {
		c.shards[i] = cacheShard{cap: capacity / n, order: list.New(), items: map[featureKey]*list.Element{}}
		if i < capacity%n {
			c.shards[i].cap++
		}
	}
	return c
}

func (c *featureCache) shard(k featureKey) *cacheShard {
	return &c.shards[k[0]%uint64(len(c.shards))]
}

// get returns the vector of k and counts a hit or a miss.
func (c *featureCache) get(k featureKey) ([]float32, bool) {
	s := c.shard(k)
	s.mu.Lock()
	var vec []float32
	e, ok := s.items[k]
	if ok {
		s.order.MoveToFront(e)
		vec = e.Value.(*cacheEntry).vec
	}
	s.mu.Unlock()
	if !ok {
		c.misses.Add(1)
		return nil, false
	}
	c.hits.Add(1)
	return vec, true
}

// put stores vec under k, evicting the shard's least recently used entry
// when it is full.
func (c *featureCache) put(k featureKey, vec []float32) {
	s := c.shard(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.items[k]; ok {
		e.Value.(*cacheEntry).vec = vec
		s.order.MoveToFront(e)
		return
	}
	if s.order.Len() >= s.cap {
		old := s.order.Back()
		delete(s.items, old.Value.(*cacheEntry).key)
		s.order.Remove(old)
	}
	s.items[k] = s.order.PushFront(&cacheEntry{key: k, vec: vec})
}

// len counts the cached vectors.
func (c *featureCache) len() int {
	n := 0
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		n += s.order.Len()
		s.mu.Unlock()
	}
	return n
}
