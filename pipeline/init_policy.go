package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/rollout"
	"github.com/rspo-dev/rspo/streams"
)

// InitPolicyRunPrefix starts an init-policy that names a recorded run
// ("run:NAME") instead of a snapshot file.
const InitPolicyRunPrefix = "run:"

// InitPolicySource is the init-policy that starts a run from the best
// final policy of its recipe's built-in source runs (Options.SourceRuns):
// the one that succeeds most often on held-out train tasks of the run's
// own environment (SourceStartEpisodes of them, the same draw for every
// run, so every seed and every algorithm of one setting starts alike).
const InitPolicySource = "source"

// InitPolicyExpertPrefix starts an init-policy "expert:K": a policy
// trained by SFT on K episodes of the environment's expert (SFT's seed
// SourcePRMSeed, so every seed and algorithm of one setting starts alike),
// trained once per store and kept in the policy store under
// sftObject; its demonstrations' environment steps count as the start's.
const InitPolicyExpertPrefix = "expert:"

// SourceStartEpisodes is how many held-out train tasks each candidate of
// InitPolicySource plays (sampled actions, as runs evaluate).
const SourceStartEpisodes = 256

// ErrInitPolicy means the policy a run was asked to start from cannot be
// used: a missing file or run, a run that has not finished, a snapshot
// that is corrupt or of another format or feature version.
var ErrInitPolicy = errors.New("pipeline: init-policy")

// InitPolicy says which policy a warm-started run began from: its source
// as given and the SHA-256 of the snapshot's bytes. The summary and the
// run's recorded settings hold it, so a resumed run is refused when the
// source changed.
type InitPolicy struct {
	// Source is the init-policy setting: a snapshot file or run:NAME.
	Source string `json:"source"`
	// SHA256 is the hex SHA-256 of the snapshot as read (the file's bytes,
	// or the recorded run's stored object).
	SHA256 string `json:"sha256"`
	// Run and Version name the recorded run's final policy (run:NAME only).
	Run     string `json:"run,omitempty"`
	Version int64  `json:"version,omitempty"`
	// Candidates, for InitPolicySource, are the success rates on held-out
	// train tasks of every source run's final policy, by run.
	Candidates map[string]float64 `json:"candidates,omitempty"`
	// EnvSteps are the environment steps the start cost: its run's (with
	// the runs that run's PRM was trained on), or, for a file, what the
	// record beside it says (rspo sft's demonstrations, or a run report's
	// summary.json). The summary counts them in EnvStepsSource.
	EnvSteps int64 `json:"env_steps"`
}

// initPolicySettingsKey is the recorded setting that holds the snapshot's
// hash beside init-policy's source.
const initPolicySettingsKey = "init-policy-sha256"

// resolveInitPolicy loads the policy cfg.InitPolicy names, sets it as the
// learner's initial policy (version 0, also the reference) and records its
// hash in the run's settings. It fails, naming the cause, before the run
// writes anything.
func (c *Config) resolveInitPolicy(ctx context.Context, js jetstream.JetStream) error {
	if c.InitPolicy == "" || c.initPolicy != nil {
		return nil
	}
	source, candidates := c.InitPolicy, map[string]float64(nil)
	var b []byte
	var info InitPolicy
	var err error
	switch {
	case source == InitPolicySource:
		if source, candidates, err = c.chooseSourceStart(ctx, js); err != nil {
			return err
		}
		b, info, err = readInitPolicy(ctx, js, source)
	case strings.HasPrefix(source, InitPolicyExpertPrefix):
		b, info, err = c.expertStart(ctx, js)
	default:
		b, info, err = readInitPolicy(ctx, js, source)
	}
	if err != nil {
		return err
	}
	info.Source, info.Candidates = c.InitPolicy, candidates
	p, err := policy.Load(b)
	if err != nil {
		return fmt.Errorf("%w %s: not a policy snapshot this rspo reads: %w", ErrInitPolicy, c.InitPolicy, err)
	}
	p.SetVersion(0)
	sum := sha256.Sum256(b)
	info.SHA256 = hex.EncodeToString(sum[:])
	c.Learner.InitPolicy, c.initPolicy = p, &info
	if c.Settings != nil {
		raw, _ := json.Marshal(info.SHA256)
		c.Settings[initPolicySettingsKey] = raw
	}
	return nil
}

// initPolicyFile reports whether InitPolicy names a snapshot file, which
// can be read before the run touches its store.
func (c Config) initPolicyFile() bool {
	return c.InitPolicy != "" && !strings.HasPrefix(c.InitPolicy, InitPolicyRunPrefix) && c.InitPolicy != InitPolicySource &&
		!strings.HasPrefix(c.InitPolicy, InitPolicyExpertPrefix)
}

// checkInitPolicyFile resolves a snapshot file before anything is written,
// so that a new run refuses an unusable one at once. A run that has begun
// no longer needs the file (its version 0 is stored): when the file fails
// and the store holds the run already, startPolicy reads its record.
func (c *Config) checkInitPolicyFile(ctx context.Context) error {
	if !c.initPolicyFile() {
		return nil
	}
	err := c.resolveInitPolicy(ctx, nil)
	if err == nil || !c.storeMayHoldRun() {
		return err
	}
	if begun, _, serr := sourceState(ctx, *c); serr != nil || !begun {
		return err
	}
	return nil
}

// storeMayHoldRun reports whether the run may have begun: a server was
// given, or the embedded store's directory exists.
func (c Config) storeMayHoldRun() bool {
	if c.NATSURL != "" {
		return true
	}
	_, err := os.Stat(filepath.Join(c.DataDir, "nats"))
	return err == nil
}

// startPolicy settles the run's start: a new run resolves InitPolicy and
// records what it resolved to in the state bucket; a run that has begun
// reads that record instead (its version 0 is stored), so it resumes
// whatever became of the source since.
func (c *Config) startPolicy(ctx context.Context, js jetstream.JetStream) error {
	_, begun, err := learnersvc.LoadCheckpoint(ctx, js, c.run())
	if err != nil {
		return err
	}
	if begun {
		err = c.readStartRecord(ctx, js)
	} else if err = c.resolveInitPolicy(ctx, js); err == nil {
		err = c.writeStartRecord(ctx, js)
	}
	if err == nil && c.initPolicy != nil && c.OnInitPolicy != nil {
		c.OnInitPolicy(*c.initPolicy)
	}
	return err
}

func startRecordKey(run string) string { return streams.StateKey(run, "pipeline", "init-policy") }

// writeStartRecord keeps what the run starts from in the state bucket.
func (c *Config) writeStartRecord(ctx context.Context, js jetstream.JetStream) error {
	kv, err := streams.State(ctx, js)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(c.initPolicy)
	_, err = kv.Put(ctx, startRecordKey(c.run()), b)
	return err
}

// readStartRecord reads the start a begun run recorded; a run begun before
// starts were recorded keeps none.
func (c *Config) readStartRecord(ctx context.Context, js jetstream.JetStream) error {
	kv, err := streams.State(ctx, js)
	if err != nil {
		return err
	}
	e, err := kv.Get(ctx, startRecordKey(c.run()))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	var info InitPolicy
	if err := json.Unmarshal(e.Value(), &info); err != nil {
		return fmt.Errorf("pipeline: start record of run %s is corrupt: %w", c.run(), err)
	}
	c.initPolicy = &info
	if c.Settings != nil {
		raw, _ := json.Marshal(info.SHA256)
		c.Settings[initPolicySettingsKey] = raw
	}
	return nil
}

// expertStart returns the SFT policy of InitPolicyExpertPrefix: stored in
// the policy store under sftObject once trained, so later runs of the
// setting read it back.
func (c *Config) expertStart(ctx context.Context, js jetstream.JetStream) ([]byte, InitPolicy, error) {
	info := InitPolicy{Source: c.InitPolicy}
	k, err := strconv.Atoi(strings.TrimPrefix(c.InitPolicy, InitPolicyExpertPrefix))
	if err != nil || k < 2 {
		return nil, info, fmt.Errorf("%w %s: want expert:K with K ≥ 2 expert episodes", ErrInitPolicy, c.InitPolicy)
	}
	object := sftObject(c.Learner.Env, c.Learner.EnvOptions, k)
	b, err := streams.GetSnapshot(ctx, js, streams.BucketPolicy, object)
	rb, rerr := streams.GetSnapshot(ctx, js, streams.BucketPolicy, object+SFTRecordSuffix)
	if err == nil && rerr == nil {
		var rec SFTResult
		if err := json.Unmarshal(rb, &rec); err != nil {
			return nil, info, fmt.Errorf("%w %s: record of %s: %w", ErrInitPolicy, c.InitPolicy, object, err)
		}
		info.EnvSteps = rec.EnvSteps
		return b, info, nil
	}
	if !errors.Is(err, jetstream.ErrObjectNotFound) || rerr != nil && !errors.Is(rerr, jetstream.ErrObjectNotFound) {
		return nil, info, fmt.Errorf("%w %s: %w", ErrInitPolicy, c.InitPolicy, errors.Join(err, rerr))
	}
	c.Logger.Info("training the expert start", "episodes", k, "object", object)
	res, err := SFT(ctx, nil, SFTOptions{Env: c.Learner.Env, EnvOptions: c.Learner.EnvOptions, Demos: DemosExpert, Episodes: k, Seed: SourcePRMSeed})
	if err != nil {
		return nil, info, fmt.Errorf("%w %s: %w", ErrInitPolicy, c.InitPolicy, err)
	}
	if b, err = res.Policy.MarshalBinary(); err != nil {
		return nil, info, err
	}
	rec, _ := json.Marshal(res)
	if err := streams.PutSnapshot(ctx, js, streams.BucketPolicy, object, b); err != nil {
		return nil, info, err
	}
	if err := streams.PutSnapshot(ctx, js, streams.BucketPolicy, object+SFTRecordSuffix, rec); err != nil {
		return nil, info, err
	}
	info.EnvSteps = res.EnvSteps
	return b, info, nil
}

// sftObject names the stored expert start of an environment setting and
// demonstration count.
func sftObject(env string, opts map[string]string, k int) string {
	return fmt.Sprintf("sft-expert/%s-%s-k%d-s%d", env, sourceSetting(opts), k, SourcePRMSeed)
}

// chooseSourceStart evaluates the final policy of every built-in source
// run on held-out train tasks of the run's environment and returns the
// best one as run:NAME, with every candidate's success rate.
func (c *Config) chooseSourceStart(ctx context.Context, js jetstream.JetStream) (string, map[string]float64, error) {
	if len(c.SourceRuns) == 0 {
		return "", nil, fmt.Errorf("%w %s: this run has no built-in source runs to start from", ErrInitPolicy, InitPolicySource)
	}
	env, err := envs.New(c.Learner.Env, c.Learner.EnvOptions)
	if err != nil {
		return "", nil, err
	}
	tasks, err := env.Tasks(envs.SplitTrain, SourceStartEpisodes, rollout.EpisodeSeed(SourcePRMSeed, "source-start-tasks"))
	if err != nil {
		return "", nil, err
	}
	best, bestRate, rates := "", -1.0, map[string]float64{}
	for _, sc := range c.SourceRuns {
		run := InitPolicyRunPrefix + sc.run()
		b, _, err := readInitPolicy(ctx, js, run)
		if err != nil {
			return "", nil, err
		}
		p, err := policy.Load(b)
		if err != nil {
			return "", nil, fmt.Errorf("%w %s: %w", ErrInitPolicy, run, err)
		}
		rep, err := rollout.Evaluate(ctx, env, tasks, policy.NewAgent(p, false), rollout.EvalOptions{Episodes: len(tasks), Seed: SourcePRMSeed})
		if err != nil {
			return "", nil, err
		}
		rates[sc.run()] = rep.Overall.SuccessRate
		if rep.Overall.SuccessRate > bestRate {
			best, bestRate = run, rep.Overall.SuccessRate
		}
	}
	return best, rates, nil
}

// readInitPolicy reads the snapshot source names: a file, or the final
// policy of a finished recorded run on the bus.
func readInitPolicy(ctx context.Context, js jetstream.JetStream, source string) ([]byte, InitPolicy, error) {
	info := InitPolicy{Source: source}
	run, isRun := strings.CutPrefix(source, InitPolicyRunPrefix)
	if !isRun {
		b, err := os.ReadFile(source)
		if err != nil {
			return nil, info, fmt.Errorf("%w: %w", ErrInitPolicy, err)
		}
		info.EnvSteps, err = fileStartSteps(source)
		return b, info, err
	}
	if err := streams.ValidateRun(run); err != nil {
		return nil, info, fmt.Errorf("%w %s: %w", ErrInitPolicy, source, err)
	}
	cp, ok, err := learnersvc.LoadCheckpoint(ctx, js, run)
	if errors.Is(err, jetstream.ErrBucketNotFound) || err == nil && !ok {
		return nil, info, fmt.Errorf("%w %s: no run %s on this server (rspo runs lists them)", ErrInitPolicy, source, run)
	}
	if err != nil {
		return nil, info, fmt.Errorf("%w %s: %w", ErrInitPolicy, source, err)
	}
	if !cp.Finished {
		return nil, info, fmt.Errorf("%w %s: run %s has not finished (update %d): its final policy is not there yet", ErrInitPolicy, source, run, cp.Update)
	}
	b, err := streams.GetSnapshot(ctx, js, streams.BucketPolicy, streams.PolicyObject(run, cp.Version))
	if err != nil {
		return nil, info, fmt.Errorf("%w %s: final policy (version %d): %w", ErrInitPolicy, source, cp.Version, err)
	}
	info.Run, info.Version = run, cp.Version
	return b, info, nil
}

// fileStartSteps reads what a snapshot file's start cost from the record
// beside it: rspo sft's (FILE.json) or, for a run report's final policy,
// the report's summary.json. Without one it is 0.
func fileStartSteps(path string) (int64, error) {
	var rec struct {
		EnvSteps       int64 `json:"env_steps"`
		EnvStepsSource int64 `json:"env_steps_source"`
	}
	recPath := path + SFTRecordSuffix
	if filepath.Base(path) == PolicyFile {
		recPath = filepath.Join(filepath.Dir(path), "summary.json")
	}
	b, err := os.ReadFile(recPath)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err == nil {
		err = json.Unmarshal(b, &rec)
	}
	if err != nil {
		return 0, fmt.Errorf("%w %s: its record %s: %w", ErrInitPolicy, path, recPath, err)
	}
	return rec.EnvSteps + rec.EnvStepsSource, nil
}

// startSteps adds up what the run's knowledge from elsewhere cost: the
// PRM's source runs (sourceSteps) and its start's (a run once, however
// both name it), filling in init's EnvSteps for a run's start.
func startSteps(ctx context.Context, js jetstream.JetStream, sources []string, init *InitPolicy) (int64, error) {
	if init == nil {
		return sourceSteps(ctx, js, sources)
	}
	if init.Run == "" {
		n, err := sourceSteps(ctx, js, sources)
		return n + init.EnvSteps, err
	}
	var err error
	if init.EnvSteps, err = sourceSteps(ctx, js, []string{init.Run}); err != nil {
		return 0, err
	}
	runs := append(slices.Clone(sources), init.Run)
	for r := range init.Candidates { // the choice took every candidate's training
		runs = append(runs, r)
	}
	slices.Sort(runs)
	return sourceSteps(ctx, js, runs)
}
