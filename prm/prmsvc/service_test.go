package prmsvc

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/prm/prmtest"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// startService serves m for run on the test server and stops it at cleanup.
func startService(t *testing.T, cfg Config) *Service {
	t.Helper()
	s := streamstest.RunServer(t)
	nc, js := streamstest.Connect(t, s)
	svc, err := New(nc, js, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(testContext(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Stop() })
	return svc
}

// TestServiceScoresFromSeparateConnection is the service test: a
// client on its own connection gets the model's scores, a malformed request
// an error reply, and the service keeps serving afterwards.
func TestServiceScoresFromSeparateConnection(t *testing.T) {
	s := streamstest.RunServer(t)
	serverConn, js := streamstest.Connect(t, s)
	m := prm.Random(4)
	m.Info = prm.ModelInfo{Trained: true, Heldout: 30, HeldoutSuccesses: 6, HeldoutAUC: 0.8}
	svc, err := New(serverConn, js, Config{Run: "svc1", Model: m})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer svc.Stop()

	clientConn, _ := streamstest.Connect(t, s)
	client, err := NewClient(clientConn, "svc1")
	if err != nil {
		t.Fatal(err)
	}
	trajs, _ := prmtest.Decisive("svc1", 1, 3, 5)
	reply, err := client.Score(ctx, trajs)
	if err != nil {
		t.Fatal(err)
	}
	if reply.Info != m.Info || !reply.Info.ShapingEnabled(0.7) {
		t.Errorf("reply info: got %+v, want %+v (gate open at 0.7)", reply.Info, m.Info)
	}
	if len(reply.Scores) != 3 || len(reply.Totals) != 3 {
		t.Fatalf("got %d score lists and %d totals, want 3 and 3", len(reply.Scores), len(reply.Totals))
	}
	for i, tr := range trajs {
		want := m.ScoreSteps(tr)
		for k := range want {
			if math.Abs(reply.Scores[i][k]-want[k]) > 1e-12 {
				t.Errorf("trajectory %d step %d: got %v, want %v", i, k, reply.Scores[i][k], want[k])
			}
		}
		if math.Abs(reply.Totals[i]-m.Score(tr)) > 1e-9 {
			t.Errorf("total %d: got %v, want %v", i, reply.Totals[i], m.Score(tr))
		}
	}

	tests := []struct {
		name    string
		request []byte
	}{
		{"garbage", []byte("definitely not arrow")},
		{"empty", nil},
		{"truncated arrow", mustEncode(t, trajs)[:100]},
		{"JSON", []byte(`{"steps": []}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := client.ScoreRaw(ctx, tt.request)
			var se *ServiceError
			if !errors.As(err, &se) || !errors.Is(err, ErrBadRequest) {
				t.Fatalf("got %v, want a *ServiceError matching ErrBadRequest", err)
			}
			if se.Code != CodeBadRequest || se.Description == "" {
				t.Errorf("got code %q description %q, want %q and a reason", se.Code, se.Description, CodeBadRequest)
			}
		})
	}
	if _, err := client.Score(ctx, trajs[:1]); err != nil {
		t.Errorf("after malformed requests the service no longer answers: %v", err)
	}
}

func mustEncode(t *testing.T, trajs []*schemas.Trajectory) []byte {
	t.Helper()
	b, err := schemas.EncodeTrajectoryBatch(trajs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestServiceEmptyBatch(t *testing.T) {
	svc := startService(t, Config{Run: "svc2", Model: prm.Random(1)})
	client, _ := NewClient(svc.nc, "svc2")
	reply, err := client.Score(testContext(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(reply.Scores) != 0 || reply.PRMVersion != 0 {
		t.Errorf("got %+v, want no scores from version 0", reply)
	}
}

func TestServiceNoise(t *testing.T) {
	m := prm.Random(2)
	svc := startService(t, Config{Run: "svc3", Model: m, Noise: 0.3, NoiseSeed: 1})
	client, _ := NewClient(svc.nc, "svc3")
	trajs, _ := prmtest.Decisive("svc3", 1, 1, 2000)
	reply, err := client.Score(testContext(t), trajs)
	if err != nil {
		t.Fatal(err)
	}
	clean := m.ScoreSteps(trajs[0])
	var ss float64
	for k, v := range reply.Scores[0] {
		ss += (v - clean[k]) * (v - clean[k])
	}
	if sd := math.Sqrt(ss / float64(len(clean))); math.Abs(sd-0.3) > 0.03 {
		t.Errorf("noise sd: got %.3f, want 0.3", sd)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"no model", Config{Run: "r"}},
		{"bad run", Config{Run: "a.b", Model: prm.Random(1)}},
		{"negative noise", Config{Run: "r", Model: prm.Random(1), Noise: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.cfg.Validate(); err == nil {
				t.Errorf("got nil, want an error")
			}
		})
	}
	if _, err := New(nil, nil, Config{Run: "r", Model: prm.Random(1), Reload: true}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("reload without JetStream: got %v, want ErrInvalidConfig", err)
	}
}
