package envs_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/envs"
	_ "github.com/rspo-dev/rspo/envs/household"
)

func TestRegistry(t *testing.T) {
	if !slices.Contains(envs.Names(), "household") {
		t.Errorf("got names %v, want household among them", envs.Names())
	}
	if _, err := envs.New("no-such-env", nil); !errors.Is(err, envs.ErrUnknownEnv) {
		t.Errorf("got %v, want ErrUnknownEnv", err)
	}
	env, err := envs.New("household", nil)
	if err != nil || env.Name() != "household" {
		t.Fatalf("got %v, %v; want the household environment", env, err)
	}
}

func TestRegisterDuplicatePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("registering household twice did not panic")
		}
	}()
	envs.Register("household", func(map[string]string) (envs.Env, error) { return nil, nil })
}

// TestDeclaredOptions: every key an environment accepts is declared, so a
// command line can tell a list option's weighted items from the next key.
func TestDeclaredOptions(t *testing.T) {
	for _, k := range []string{"preset", "max_steps", "receptacles", "closed", "objects", "task_types"} {
		if !envs.IsOptionKey(k) {
			t.Errorf("household's option %q is not declared", k)
		}
		if _, err := envs.New("household", map[string]string{k: "x"}); err != nil && strings.Contains(err.Error(), "unknown option") {
			t.Errorf("household does not accept its declared option %q: %v", k, err)
		}
	}
	if !envs.IsListOption("task_types") || envs.IsListOption("preset") {
		t.Errorf("list options: task_types %v, preset %v; want true, false", envs.IsListOption("task_types"), envs.IsListOption("preset"))
	}
	if envs.IsOptionKey("pick_two_and_place") {
		t.Error("a task type is declared an option key: weighted task types would be split at it")
	}
}
