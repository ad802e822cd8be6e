package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/prm/prmsvc"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// SourcePRMSeed is the training seed of every PRM trained on source runs.
// It is fixed rather than the target run's seed so that all runs on the
// same sources share one model: the first trains and stores it, the others
// load it (SourcePRM.Reused) and start with no PRM training at all. It is
// 1 so that a seed-1 run gets the model it got when the seed was the run's.
const SourcePRMSeed = 1

// sourcePRMFormat is part of a source PRM's provenance: bump it whenever
// the same sources, featurizer, target and seed would train another model
// (other training defaults, a changed trainer), so that no run reuses a
// snapshot the code would no longer train. 2: the source runs' trajectories
// are read in their ids' order (prmsvc.Collect), not the order an
// explorer's records happened to arrive in.
const sourcePRMFormat = 2

// sourcePRMPrefix is the object name prefix of the stored source PRMs in
// streams.BucketPRM; the name goes on with the provenance's hash.
const sourcePRMPrefix = "source-prm/"

// SourcePRMProvenance is what a PRM trained on source runs was trained on
// and how. Two equal provenances train the same model, so it names the
// stored snapshot (its hash does).
type SourcePRMProvenance struct {
	// Format is sourcePRMFormat of the code that trained it.
	Format int `json:"format"`
	// Sources are the recorded runs, in the order read.
	Sources []string `json:"sources"`
	// LastSeq is the last stream sequence read of each source's subjects
	// ("run/subject", prmsvc.Collect's), so a source that recorded more
	// since is another provenance.
	LastSeq map[string]uint64 `json:"last_seq"`
	// Featurizer, Target and Seed are the training settings that are not
	// prm.TrainConfig's defaults.
	Featurizer prm.FeaturizerSpec `json:"featurizer"`
	Target     prm.Target         `json:"target"`
	Seed       uint64             `json:"seed"`
}

// Object is the stored snapshot's name in streams.BucketPRM:
// "source-prm/" and 16 bytes of the provenance's SHA-256, in hex.
func (p SourcePRMProvenance) Object() string {
	b, _ := json.Marshal(p) // strings, numbers and raw JSON; map keys are sorted
	h := sha256.Sum256(b)
	return sourcePRMPrefix + hex.EncodeToString(h[:16])
}

// SourcePRM is the record of a run's PRM trained on source runs
// (Summary.SourcePRM); beside the snapshot it is stored as the object
// named Object + ".json".
type SourcePRM struct {
	// Object is the snapshot's name in streams.BucketPRM.
	Object string `json:"object"`
	// Reused is true when the run loaded a snapshot an earlier run had
	// trained, false when the run trained it (and in the stored record).
	Reused bool `json:"reused"`
	// Provenance is what the model was trained on and how.
	Provenance SourcePRMProvenance `json:"provenance"`
	// Report is what its training measured.
	Report prm.TrainReport `json:"report"`
}

// sourcePRMKey is the state key of a run's SourcePRM record.
func sourcePRMKey(run string) string { return streams.StateKey(run, "pipeline", "source-prm") }

// sourcePRM returns the step-target PRM of the source runs' recorded
// trajectories for a new run, and records for the run which one it is:
// the stored snapshot of the same provenance if an earlier run trained
// it, else one trained now (and stored for the next run). A featurizer that
// cannot be snapshotted trains every time.
func sourcePRM(ctx context.Context, js jetstream.JetStream, cfg Config) (*prm.Model, error) {
	m, rec, err := storedSourcePRM(ctx, js, cfg)
	if err != nil {
		return nil, err
	}
	return m, recordSourcePRM(ctx, js, cfg.run(), rec)
}

// storedSourcePRM returns the PRM of cfg.Sources as sourcePRM does, and
// its record, without recording it for a run.
func storedSourcePRM(ctx context.Context, js jetstream.JetStream, cfg Config) (*prm.Model, SourcePRM, error) {
	feat := cfg.Learner.PRMTrain.Featurizer
	if feat == nil {
		feat = prm.DefaultFeaturizer()
	}
	prov := SourcePRMProvenance{Format: sourcePRMFormat, Sources: slices.Clone(cfg.Sources), Target: prm.TargetStep, Seed: SourcePRMSeed}
	sf, cacheable := feat.(prm.SpecFeaturizer)
	if cacheable {
		prov.Featurizer = sf.Spec()
		var err error
		if prov.LastSeq, err = sourceMarks(ctx, js, cfg.Sources); err != nil {
			return nil, SourcePRM{}, fmt.Errorf("pipeline: read PRM source runs %v: %w", cfg.Sources, err)
		}
		m, rec, ok := loadSourcePRM(ctx, js, prov.Object(), cfg)
		if ok {
			rec.Reused = true
			cfg.Logger.Info("PRM of the source runs reused", "object", rec.Object, "runs", cfg.Sources,
				"trajectories", rec.Report.Trajectories, "heldout_auc", rec.Report.HeldoutEval.AUC)
			return m, rec, nil
		}
	}
	m, rec, err := trainSourcePRM(ctx, js, cfg, feat, prov)
	if err != nil {
		return nil, SourcePRM{}, err
	}
	if cacheable {
		storeSourcePRM(ctx, js, m, rec, cfg)
	}
	return m, rec, nil
}

// trainSourcePRM reads the sources and trains the PRM of provenance prov
// (whose LastSeq it sets to what it read).
func trainSourcePRM(ctx context.Context, js jetstream.JetStream, cfg Config, feat prm.Featurizer, prov SourcePRMProvenance) (*prm.Model, SourcePRM, error) {
	srcs := make([]prmsvc.Source, len(cfg.Sources))
	for i, run := range cfg.Sources {
		srcs[i] = prmsvc.Source{Run: run}
	}
	ds, err := prm.NewDataset(prm.TrainConfig{Target: prov.Target, Seed: prov.Seed, Featurizer: feat, OnEpoch: cfg.OnPRMEpoch})
	if err != nil {
		return nil, SourcePRM{}, fmt.Errorf("pipeline: train the PRM on source runs %v: %w", cfg.Sources, err)
	}
	// One source's subject at a time: the PRM keeps each trajectory's
	// feature rows, not the trajectory, so the runs' trajectories are never
	// all in memory at once.
	st, err := prmsvc.CollectEach(ctx, js, srcs, func(ts []*schemas.Trajectory) error { return ds.Add(ctx, ts) })
	if err != nil {
		return nil, SourcePRM{}, fmt.Errorf("pipeline: read PRM source runs %v: %w", cfg.Sources, err)
	}
	if ds.Len() == 0 {
		return nil, SourcePRM{}, fmt.Errorf("pipeline: PRM source runs %v hold no trajectories on this server (run them first, or name others with prm-source)", cfg.Sources)
	}
	if cfg.OnSourcePRM != nil {
		cfg.OnSourcePRM(ds.Len())
	}
	m, rep, err := ds.Train(ctx)
	if err != nil {
		return nil, SourcePRM{}, fmt.Errorf("pipeline: train the PRM on source runs %v: %w", cfg.Sources, err)
	}
	prov.LastSeq = nonZero(st.LastSeq)
	cfg.Logger.Info("PRM trained on the source runs", "runs", cfg.Sources, "trajectories", rep.Trajectories,
		"successes", rep.Successes, "heldout_auc", rep.HeldoutEval.AUC, "seconds", rep.Seconds, "undecodable", st.Undecodable)
	return m, SourcePRM{Object: prov.Object(), Provenance: prov, Report: rep}, nil
}

// sourceMarks returns the last stream sequence of every source subject
// prmsvc.Collect reads, keyed as its LastSeq is (subjects with no message
// left out), without reading the messages.
func sourceMarks(ctx context.Context, js jetstream.JetStream, runs []string) (map[string]uint64, error) {
	marks := map[string]uint64{}
	for _, run := range runs {
		for _, subj := range prmsvc.DefaultSubjects {
			seq, err := streams.LastSeq(ctx, js, streams.ReplayOptions{Run: run, Subject: subj})
			if err != nil {
				return nil, err
			}
			marks[run+"/"+string(subj)] = seq
		}
	}
	return nonZero(marks), nil
}

func nonZero(m map[string]uint64) map[string]uint64 {
	out := maps.Clone(m)
	maps.DeleteFunc(out, func(_ string, v uint64) bool { return v == 0 })
	return out
}

// loadSourcePRM reads the stored snapshot named object and its record. A
// missing one is a miss; an unreadable or inconsistent one is logged and
// a miss too (the caller trains and overwrites it).
func loadSourcePRM(ctx context.Context, js jetstream.JetStream, object string, cfg Config) (*prm.Model, SourcePRM, bool) {
	var rec SourcePRM
	b, err := streams.GetSnapshot(ctx, js, streams.BucketPRM, object)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, rec, false
	}
	if err == nil {
		var rb []byte
		if rb, err = streams.GetSnapshot(ctx, js, streams.BucketPRM, object+".json"); err == nil {
			err = json.Unmarshal(rb, &rec)
		}
	}
	var m *prm.Model
	if err == nil {
		m, err = prm.DecodeSnapshot(b)
	}
	if err == nil && (rec.Object != object || rec.Provenance.Object() != object) {
		err = fmt.Errorf("its record names %s, provenance %s", rec.Object, rec.Provenance.Object())
	}
	if err != nil {
		cfg.Logger.Warn("stored PRM of the source runs is unusable: training it again", "object", object, "err", err)
		return nil, SourcePRM{}, false
	}
	return m, rec, true
}

// storeSourcePRM stores m and its record for later runs. Failing to is
// logged, not an error: the run has its PRM, the next one trains again.
func storeSourcePRM(ctx context.Context, js jetstream.JetStream, m *prm.Model, rec SourcePRM, cfg Config) {
	b, err := prm.EncodeSnapshot(m)
	if err == nil {
		err = streams.PutSnapshot(ctx, js, streams.BucketPRM, rec.Object, b)
	}
	if err == nil {
		rb, _ := json.Marshal(rec) // plain data
		err = streams.PutSnapshot(ctx, js, streams.BucketPRM, rec.Object+".json", rb)
	}
	if err != nil {
		cfg.Logger.Warn("could not store the PRM of the source runs for later runs", "object", rec.Object, "err", err)
	}
}

// recordSourcePRM saves rec as the run's record, which its report reads.
func recordSourcePRM(ctx context.Context, js jetstream.JetStream, run string, rec SourcePRM) error {
	kv, err := streams.State(ctx, js)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(rec) // plain data
	if _, err := kv.Put(ctx, sourcePRMKey(run), b); err != nil {
		return fmt.Errorf("pipeline: record the PRM of run %s: %w", run, err)
	}
	return nil
}

// loadSourcePRMRecord returns run's record, or nil when it has none (its
// PRM did not come from source runs, or it started before records were
// kept).
func loadSourcePRMRecord(ctx context.Context, js jetstream.JetStream, run string) (*SourcePRM, error) {
	kv, err := streams.State(ctx, js)
	if err != nil {
		return nil, err
	}
	e, err := kv.Get(ctx, sourcePRMKey(run))
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("pipeline: read the PRM record of run %s: %w", run, err)
	}
	var rec SourcePRM
	if err := json.Unmarshal(e.Value(), &rec); err != nil {
		return nil, fmt.Errorf("pipeline: the PRM record of run %s is corrupt: %w", run, err)
	}
	return &rec, nil
}
