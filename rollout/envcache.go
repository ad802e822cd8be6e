package rollout

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/rspo-dev/rspo/envs"
)

// EnvCache builds each (name, options) environment once: building one can
// be costly (the shop generates its catalogue and search index), and an
// environment's Reset is safe for concurrent use. The zero value is ready
// to use; an EnvCache is safe for concurrent use.
type EnvCache struct {
	mu   sync.Mutex
	envs map[string]envs.Env
}

// Get returns the environment name built with opts, building it on first use.
func (c *EnvCache) Get(name string, opts map[string]string) (envs.Env, error) {
	key := envKey(name, opts)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.envs[key]; ok {
		return e, nil
	}
	e, err := envs.New(name, opts)
	if err != nil {
		return nil, err
	}
	if c.envs == nil {
		c.envs = map[string]envs.Env{}
	}
	c.envs[key] = e
	return e, nil
}

func envKey(name string, opts map[string]string) string {
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(name)
	for _, k := range keys {
		fmt.Fprintf(&b, "\x00%s=%s", k, opts[k])
	}
	return b.String()
}
