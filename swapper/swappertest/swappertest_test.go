package swappertest

import (
	"errors"
	"testing"

	"github.com/rspo-dev/rspo/schemas"
)

func TestExplorerIsValidAndDeterministic(t *testing.T) {
	a, b := Explorer("r", 2, 7, 32), Explorer("r", 2, 7, 32)
	if err := a.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if string(Encode(a)) != string(Encode(b)) {
		t.Error("two calls with the same arguments encode differently")
	}
	if Explorer("r", 2, 8, 32).ID == a.ID || Explorer("r", 3, 7, 32).ID == a.ID {
		t.Error("trajectories of other indices or cycles share the id")
	}
}

func TestMalformedEncodingsAreRefused(t *testing.T) {
	tr := Explorer("r", 0, 1, 4)
	tests := []struct {
		name string
		data []byte
		want error
	}{
		{"NaN reward", WithNaNReward(tr), schemas.ErrInvalid},
		{"schema version 99", WithSchemaVersion(tr, "99"), schemas.ErrSchemaVersion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := schemas.DecodeTrajectory(tt.data); !errors.Is(err, tt.want) {
				t.Errorf("DecodeTrajectory error = %v, want %v", err, tt.want)
			}
		})
	}
	if _, err := schemas.DecodeTrajectory(WithSchemaVersion(tr, "1")); err != nil {
		t.Errorf("rewritten with the current version: %v, want it to decode", err)
	}
}
