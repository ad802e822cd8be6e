package prm_test

import (
	"testing"

	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/prm/featurizertest"
)

func TestHashProjectionConformance(t *testing.T) {
	featurizertest.Run(t, prm.DefaultFeaturizer())
	h, err := prm.NewHashProjection(prm.HashProjectionConfig{Dim: 16, NGram: 3, Nonzeros: 4, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	featurizertest.Run(t, h)
}
