package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/streams"
)

// busName is the member name of the NATS server process.
const busName = "nats"

// member is one OS process of a chaos run, a stage or the bus, with what
// the harness did to it and what it did by itself.
type member struct {
	name string
	*proc
	logPath         string
	kills, restarts int
	// unplanned lists the exits the harness did not cause: each needed a
	// restart that, outside the test, an operator would have had to do.
	unplanned []string
	// finished is set when the learner exits with status 0 on its own.
	finished bool
}

// exited reports, without blocking, whether the process has ended and with
// what status. The proc is then stopped; start runs it again.
func (p *proc) exited() (bool, error) {
	if p.cmd == nil {
		return false, nil
	}
	select {
	case err := <-p.done:
		p.cmd = nil
		return true, err
	default:
		return false, nil
	}
}

// restart starts a stopped member again with its arguments, marking the
// log so a reader sees where one life of the process ends.
func (m *member) restart(why string) {
	fmt.Fprintf(m.log, "---- restarted by the test harness: %s\n", why)
	m.restarts++
	m.start()
}

// chaosCluster runs the bus and every stage as separate processes and
// kills and restarts them.
type chaosCluster struct {
	*stageCluster
	nc       *nats.Conn
	members  []*member
	updates  int            // the learner's
	injected map[string]int // messages injected, by injection (chaos_inject_test.go)
	start    time.Time
}

// startChaos starts the bus process, connects to it, and starts every
// stage of run, the learner last, training updates updates.
func startChaos(t *testing.T, run string, updates int, timeout time.Duration) *chaosCluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	dir, port := t.TempDir(), strconv.Itoa(freePort(t))
	url := "nats://127.0.0.1:" + port
	sc := &stageCluster{t: t, bin: buildRSPO(t), url: url, run: run, dir: dir, ctx: ctx}
	c := &chaosCluster{stageCluster: sc, updates: updates, injected: map[string]int{}, start: time.Now()}
	// The bus keeps its store and port across restarts, as an operator
	// restarting `serve nats` would.
	c.add(busName, "serve", "nats", "--data", filepath.Join(dir, "bus"), "--port", port)
	c.connect()
	stage := func(name string, args ...string) []string {
		return append([]string{"serve", name, "--nats", url, "--run", run}, args...)
	}
	// Short ack waits on every consuming stage, so the work a killed stage
	// held comes back within seconds, not after the 30 s default: with the
	// default, an explorer killed with a shard in hand stalled the run for
	// 30 s, and a second such wait on a loaded CI machine ran past the
	// plan's timeout. (The stages heartbeat every third of it, so a slow
	// shard is not redelivered while its stage lives.)
	c.add("actor-0", stage("actor", "--parallel", "1", "--ack-wait", "3s")...)
	c.add("actor-1", stage("actor", "--parallel", "1", "--ack-wait", "3s")...)
	c.add("explorer", stage("explorer", "--ack-wait", "3s")...)
	c.add("swapper", stage("swapper", "--ack-wait", "2s")...)
	c.add("buffer", stage("buffer", "--data", filepath.Join(dir, "buffer"), "--ack-wait", "2s")...)
	c.add("prm", stage("prm", "--random", "1")...)
	// The learner's evaluations go to the actors in 2 shards each, so that
	// forged results have shards to answer.
	c.add("learner", append(sc.learnerArgs(updates), "--eval-shards", "2")...)
	return c
}

// freePort returns a loopback TCP port nobody listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func (c *chaosCluster) add(name string, args ...string) {
	logPath := filepath.Join(c.dir, name+".log")
	c.members = append(c.members, &member{name: name, logPath: logPath, proc: newProc(c.t, c.bin, logPath, args...)})
}

func (c *chaosCluster) member(name string) *member {
	for _, m := range c.members {
		if m.name == name {
			return m
		}
	}
	c.t.Fatalf("no member %q", name)
	return nil
}

// connect opens the harness's own connection. It retries and reconnects
// forever: the harness must outlive every restart of the bus it kills.
func (c *chaosCluster) connect() {
	c.t.Helper()
	nc, err := nats.Connect(c.url, nats.Name("chaos-harness"), nats.RetryOnFailedConnect(true),
		nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(nc.Close)
	if c.js, err = jetstream.New(nc); err != nil {
		c.t.Fatal(err)
	}
	c.nc = nc
	c.waitBus()
}

// waitBus returns once the server answers JetStream requests and holds the
// rspo streams (`serve nats` creates them after it starts listening).
func (c *chaosCluster) waitBus() {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(c.ctx, time.Second)
		_, err := c.js.Stream(ctx, streams.StreamDLQ)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("the bus is not serving JetStream 30 s after it started: %v\n%s", err, c.tail(c.member(busName), 20))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// note records what happened, with the time since the start.
func (c *chaosCluster) note(format string, args ...any) {
	c.t.Logf("%6.2fs %s", time.Since(c.start).Seconds(), fmt.Sprintf(format, args...))
}

// progress is the learner's checkpointed update, -1 while unknown (the
// bus restarting, no checkpoint yet).
func (c *chaosCluster) progress() int64 {
	ctx, cancel := context.WithTimeout(c.ctx, 500*time.Millisecond)
	defer cancel()
	cp, ok, err := learnersvc.LoadCheckpoint(ctx, c.js, c.run)
	if err != nil || !ok {
		return -1
	}
	return cp.Update
}

// supervise restarts every member that exited on its own, recording the
// exit as unplanned, except the learner exiting 0: it has trained the run.
func (c *chaosCluster) supervise() {
	for _, m := range c.members {
		done, err := m.exited()
		if !done {
			continue
		}
		if m.name == "learner" && err == nil {
			m.finished = true
			c.note("learner exited 0 after update %d", c.progress())
			continue
		}
		why := fmt.Sprintf("exited by itself (%v) after update %d; its log ends:\n%s", err, c.progress(), c.tail(m, 8))
		m.unplanned = append(m.unplanned, why)
		c.note("%s %s", m.name, why)
		m.restart("it exited by itself")
		if m.name == busName {
			c.waitBus()
		}
	}
}

// kill SIGKILLs m and restarts it with the same arguments; the bus is
// waited for, the stages are left to reconnect by themselves.
func (c *chaosCluster) kill(m *member) {
	c.note("SIGKILL %s at update %d", m.name, c.progress())
	m.proc.kill()
	m.kills++
	m.restart("after SIGKILL")
	if m.name == busName {
		c.waitBus()
		c.note("bus back at update %d", c.progress())
	}
}

// tail returns the last n lines of m's log.
func (c *chaosCluster) tail(m *member, n int) string {
	b, err := os.ReadFile(m.logPath)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return "\t" + strings.Join(lines[max(0, len(lines)-n):], "\n\t")
}

// chaosPlan is one chaos run: what may be killed, how often and when.
type chaosPlan struct {
	seed    uint64
	updates int
	kills   int
	// targets are the members that may be killed. Kills take them in
	// shuffled rounds, so every target is killed once before any twice.
	targets []string
	// minGap and maxGap bound the random pause before each kill.
	minGap, maxGap time.Duration
	timeout        time.Duration
	// inject is how many messages of each injection (chaos_inject_test.go)
	// are published: half before the first kill, half after a kill drawn
	// at random.
	inject int
}

// chaos kills members as the plan says while the learner trains, and
// returns once the learner has finished (or fails the test at the plan's
// timeout).
func (c *chaosCluster) chaos(p chaosPlan) {
	c.t.Helper()
	rng := rand.New(rand.NewPCG(p.seed, 0x5eed))
	order := killOrder(rng, p.targets, p.kills)
	c.t.Logf("kill order %v", order)
	kills := 0
	irng := rand.New(rand.NewPCG(p.seed, 0x1a7ec7))
	injectAt := 1 + irng.IntN(max(1, p.kills-1)) // the kill after which the second half goes in
	c.inject(irng, p.inject/2)
	last, next := time.Now(), time.Now().Add(gap(rng, p))
	for deadline := time.Now().Add(p.timeout); ; time.Sleep(25 * time.Millisecond) {
		if time.Now().After(deadline) {
			c.report()
			c.dumpLogs(25)
			c.t.Fatalf("the learner did not finish within %v (checkpoint at update %d of %d); the run's streams:\n%s\nwhere the learner waits:\n%s",
				p.timeout, c.progress(), p.updates, c.diagnose(), c.learnerStacks())
		}
		if c.supervise(); c.member("learner").finished {
			break
		}
		if kills == len(order) || !c.killDue(p, kills, last, next) {
			continue
		}
		c.kill(c.member(order[kills]))
		if kills++; kills == injectAt {
			c.inject(irng, p.inject-p.inject/2)
		}
		last, next = time.Now(), time.Now().Add(gap(rng, p))
	}
	if kills < p.kills {
		c.t.Errorf("the learner finished after %d of the plan's %d kills: lengthen the run or shorten the gaps", kills, p.kills)
	}
}

// killOrder draws n kill targets in shuffled rounds of targets: every
// target is killed once before any is killed twice, so a short plan still
// covers every kind.
func killOrder(rng *rand.Rand, targets []string, n int) []string {
	var order []string
	for len(order) < n {
		round := slices.Clone(targets)
		rng.Shuffle(len(round), func(i, j int) { round[i], round[j] = round[j], round[i] })
		order = append(order, round...)
	}
	return order[:n]
}

// killMark is the learner's update before which kill k (0-based) waits:
// the kills spread over the first four fifths of the run whatever the
// machine's speed, so a slow learner is not killed ten times in its first
// updates.
func (p chaosPlan) killMark(k int) int64 {
	return int64(k * p.updates * 4 / (5 * p.kills))
}

// killDue says whether kill k may happen now, the previous one having
// been at last: once its random gap has passed and the learner has
// reached its mark, or, when the learner is past the next kill's mark
// too (a fast machine, or a kill that cost nothing), after the plan's
// least gap, so a fast learner does not finish before the plan has killed
// everything (it did, once a killed stage's work came back in seconds).
func (c *chaosCluster) killDue(p chaosPlan, k int, last, next time.Time) bool {
	if time.Since(last) < p.minGap {
		return false
	}
	u := c.progress()
	if u < p.killMark(k) {
		return false
	}
	return !time.Now().Before(next) || u >= p.killMark(k+1)
}

func gap(rng *rand.Rand, p chaosPlan) time.Duration {
	return p.minGap + time.Duration(rng.Int64N(int64(p.maxGap-p.minGap)+1))
}

// publishRetrying publishes msg until the bus acknowledges it and reports
// whether msg is what the stream holds under its message id: a retry
// across a bus restart is a duplicate of msg itself, but a message whose
// id another already took is not stored.
func (c *chaosCluster) publishRetrying(msg *nats.Msg) (stored bool, err error) {
	var ack *jetstream.PubAck
	for range 50 {
		ctx, cancel := context.WithTimeout(c.ctx, time.Second)
		ack, err = c.js.PublishMsg(ctx, msg)
		cancel()
		if err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil || !ack.Duplicate {
		return err == nil, err
	}
	st, err := c.js.Stream(c.ctx, ack.Stream)
	if err != nil {
		return false, err
	}
	held, err := st.GetMsg(c.ctx, ack.Sequence)
	if err != nil {
		return false, err
	}
	return bytes.Equal(held.Data, msg.Data), nil
}

// report logs, per member, the kills, restarts and unplanned exits.
func (c *chaosCluster) report() {
	var b strings.Builder
	fmt.Fprintf(&b, "%-9s %5s %8s %9s\n", "member", "kills", "restarts", "unplanned")
	for _, m := range c.members {
		fmt.Fprintf(&b, "%-9s %5d %8d %9d\n", m.name, m.kills, m.restarts, len(m.unplanned))
	}
	c.t.Logf("per member:\n%s", b.String())
}

// diagnose says what a stalled run's streams and consumers hold: which
// stage stopped taking its messages. It goes into the failure message,
// the last thing a truncated CI log keeps.
func (c *chaosCluster) diagnose() string {
	var b strings.Builder
	for _, name := range []string{streams.StreamWork, streams.StreamTraj, streams.StreamCtrl, streams.StreamSwapped} {
		st, err := c.js.Stream(c.ctx, name)
		if err != nil {
			fmt.Fprintf(&b, "stream %s: %v\n", name, err)
			continue
		}
		info, err := st.Info(c.ctx, jetstream.WithSubjectFilter(streams.SubjectPrefix+"."+c.run+".>"))
		if err != nil {
			fmt.Fprintf(&b, "stream %s: %v\n", name, err)
			continue
		}
		fmt.Fprintf(&b, "stream %s: %d messages, subjects %v\n", name, info.State.Msgs, info.State.Subjects)
		for ci := range st.ListConsumers(c.ctx).Info() {
			fmt.Fprintf(&b, "  consumer %s: filter %q pending %d, ack pending %d, redelivered %d, waiting pulls %d, delivered %d, ack floor %d\n",
				ci.Name, ci.Config.FilterSubject, ci.NumPending, ci.NumAckPending, ci.NumRedelivered, ci.NumWaiting,
				ci.Delivered.Stream, ci.AckFloor.Stream)
		}
	}
	return b.String()
}

// learnerStacks makes a stalled learner print its goroutines (SIGQUIT:
// the Go runtime dumps every stack and exits) and returns those running
// the project's code, which say what it waits for.
func (c *chaosCluster) learnerStacks() string {
	m := c.member("learner")
	if m.proc.cmd == nil {
		return "(the learner is not running)"
	}
	_ = m.proc.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-m.proc.done:
		m.proc.cmd = nil
	case <-time.After(5 * time.Second):
		return "(the learner did not exit on SIGQUIT)"
	}
	b, err := os.ReadFile(m.logPath)
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, g := range strings.Split(string(b), "\n\n") {
		if strings.HasPrefix(g, "goroutine ") && strings.Contains(g, "rspo-dev/rspo/") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}

// dumpLogs logs the end of every member's log, for a failed run.
func (c *chaosCluster) dumpLogs(lines int) {
	for _, m := range c.members {
		c.t.Logf("%s.log:\n%s", m.name, c.tail(m, lines))
	}
}
