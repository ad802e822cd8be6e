package envs_test

import (
	"errors"
	"slices"
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
