package producers

import (
	"context"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/rollout"
	"github.com/rspo-dev/rspo/streams"
)

// A Backend hands out the player of a policy version: the built-in policy
// from the run's snapshots (PolicyCache), or a policy behind an
// inference server (llm.Backend). A Backend must be safe for concurrent use.
type Backend interface {
	// Player returns the player of version v. An error is retried: the
	// version may not be visible yet.
	Player(ctx context.Context, v int64) (rollout.Player, error)
}

var _ Backend = (*PolicyCache)(nil)

// PolicyCache loads policy snapshots of one run from the object store and
// keeps the most recent few in memory: every rollout request names a
// version, and consecutive requests mostly name the same one.
type PolicyCache struct {
	js   jetstream.JetStream
	run  string
	size int

	mu       sync.Mutex
	versions []int64 // least recently used first
	policies map[int64]*policy.Policy
}

// NewPolicyCache returns a cache holding at most size policies (default 4).
func NewPolicyCache(js jetstream.JetStream, run string, size int) *PolicyCache {
	if size <= 0 {
		size = 4
	}
	return &PolicyCache{js: js, run: run, size: size, policies: map[int64]*policy.Policy{}}
}

// Get returns policy version v. The returned policy is shared: callers only
// read it (Distribution, Sample and Rollout are safe for concurrent use) and
// Clone it before training.
func (c *PolicyCache) Get(ctx context.Context, v int64) (*policy.Policy, error) {
	c.mu.Lock()
	if p, ok := c.policies[v]; ok {
		c.touch(v)
		c.mu.Unlock()
		return p, nil
	}
	c.mu.Unlock()
	b, err := streams.GetSnapshot(ctx, c.js, streams.BucketPolicy, streams.PolicyObject(c.run, v))
	if err != nil {
		return nil, fmt.Errorf("producers: policy version %d of run %s: %w", v, c.run, err)
	}
	p, err := policy.Load(b)
	if err != nil {
		return nil, fmt.Errorf("producers: policy version %d of run %s: %w", v, c.run, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.policies[v]; !ok {
		c.policies[v] = p
		c.versions = append(c.versions, v)
		if len(c.versions) > c.size {
			delete(c.policies, c.versions[0])
			c.versions = c.versions[1:]
		}
	}
	return c.policies[v], nil
}

// Player returns the built-in policy of version v as a player.
func (c *PolicyCache) Player(ctx context.Context, v int64) (rollout.Player, error) {
	p, err := c.Get(ctx, v)
	if err != nil {
		return nil, err
	}
	return rollout.PolicyPlayer{Policy: p}, nil
}

func (c *PolicyCache) touch(v int64) {
	for i, x := range c.versions {
		if x == v {
			c.versions = append(append(c.versions[:i:i], c.versions[i+1:]...), v)
			return
		}
	}
}
