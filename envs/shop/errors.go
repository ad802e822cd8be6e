package shop

import (
	"errors"
	"fmt"
)

// Errors returned by the shop environment.
var (
	// ErrConfig is the class of every configuration error; a ConfigError
	// matches it with errors.Is.
	ErrConfig = errors.New("shop: invalid configuration")
	// ErrTask means a task handed to Reset was not produced by this
	// environment's Tasks (wrong id, split, seed or instruction).
	ErrTask = errors.New("shop: invalid task")
	// ErrForeignEpisode means ExpertAction got an episode of another
	// environment.
	ErrForeignEpisode = errors.New("shop: episode is not a shop episode")
)

// ConfigError says which option or field is wrong and why.
type ConfigError struct {
	// Field is the option key, e.g. "max_steps".
	Field string
	// Reason says what is wrong in words a user can act on.
	Reason string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("shop: invalid %s: %s", e.Field, e.Reason)
}

// Is makes errors.Is(err, ErrConfig) true for every ConfigError.
func (e *ConfigError) Is(target error) bool { return target == ErrConfig }
