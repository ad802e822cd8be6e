package prmsvc

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/prm/prmtest"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

// downFeaturizer is a featurizer behind an inference server that is down.
type downFeaturizer struct{ *prm.HashProjection }

func (downFeaturizer) FeaturesBatch(context.Context, []prm.StepText, []float32) error {
	return errors.New("test: the embeddings server is down")
}

// A featurizer failure is a server error reply, never NaN scores.
func TestServiceRepliesFeaturizerFailure(t *testing.T) {
	s := streamstest.RunServer(t)
	nc, js := streamstest.Connect(t, s)
	m, err := prm.New(downFeaturizer{prm.DefaultFeaturizer()}, prm.ModelConfig{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := New(nc, js, Config{Run: "down", Model: m})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer svc.Stop()
	client, err := NewClient(nc, "down")
	if err != nil {
		t.Fatal(err)
	}
	trajs, _ := prmtest.Decisive("down", 1, 2, 3)
	_, err = client.Score(ctx, trajs)
	if !errors.Is(err, ErrServer) || !strings.Contains(err.Error(), "featurizer failed") {
		t.Errorf("got %v, want a server error naming the featurizer's failure", err)
	}
}
