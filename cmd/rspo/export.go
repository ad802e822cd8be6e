package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

func init() { addCommand(newExportCmd) }

// exportSubjects are the subjects `rspo export` writes as tables.
var exportSubjects = []streams.SubjectKind{streams.KindTrajOnPolicy, streams.KindTrajExplore, streams.KindSwapped, streams.KindMetrics}

// exportFlags are the flags of `rspo export` besides the source.
type exportFlags struct {
	run, subject, format, out string
	skipWarmup                bool
}

func newExportCmd() *cobra.Command {
	var src sourceFlags
	var f exportFlags
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Write a run's trajectories (one row per step) or metrics (one row per value) as Parquet or JSON lines",
		Long: "Read one subject of a run and write it as a table: trajectories with one row per step\n" +
			"(the trajectory's fields repeated on each), metrics with one row per value. The columns\n" +
			"are listed in docs/protocol.md (\"Exporting a run\"). With --data it reads a store directly.",
		Example: "  rspo export --data runs --run exp1 --subject traj.onpolicy --format parquet --out steps.parquet\n" +
			"  rspo export --run exp1 --subject metrics --format jsonl --out metrics.jsonl",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.validate(); err != nil {
				return err
			}
			js, closeFn, err := src.open(cmd.Context(), "rspo-export")
			if err != nil {
				return err
			}
			defer closeFn()
			if err := requireRun(cmd.Context(), js, f.run); err != nil {
				return err
			}
			n, skipped, err := exportRun(cmd.Context(), js, f)
			if err != nil {
				return err
			}
			if skipped > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "rspo: export: %d messages left out: they do not decode\n", skipped)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "rspo: %d rows written to %s\n", n, f.out)
			return nil
		},
	}
	fs := cmd.Flags()
	src.register(fs)
	fs.StringVar(&f.run, "run", "", "run name (required)")
	fs.StringVar(&f.subject, "subject", "", "what to export: "+strings.Join(kindNames(exportSubjects), "|")+" (required)")
	fs.StringVar(&f.format, "format", "parquet", "output format: parquet|jsonl")
	fs.StringVar(&f.out, "out", "", "file to write (required)")
	fs.BoolVar(&f.skipWarmup, "skip-warmup", false, "leave out the PRM warm-up's rollouts (traj.onpolicy)")
	for _, name := range []string{"run", "subject", "out"} {
		_ = cmd.MarkFlagRequired(name)
	}
	return cmd
}

func (f exportFlags) validate() error {
	if !containsKind(exportSubjects, f.subject) {
		return fmt.Errorf("--subject %q: give one of %s", f.subject, strings.Join(kindNames(exportSubjects), ", "))
	}
	if f.format != "parquet" && f.format != "jsonl" {
		return fmt.Errorf("--format %q: give parquet or jsonl", f.format)
	}
	if f.skipWarmup && f.subject != string(streams.KindTrajOnPolicy) {
		return fmt.Errorf("--skip-warmup: the warm-up's rollouts are on traj.onpolicy, not %s", f.subject)
	}
	return nil
}

func containsKind(kinds []streams.SubjectKind, s string) bool {
	for _, k := range kinds {
		if string(k) == s {
			return true
		}
	}
	return false
}

// exportRun replays the subject into the output file and returns the
// rows written and the messages left out because they do not decode.
func exportRun(ctx context.Context, js jetstream.JetStream, f exportFlags) (rows, skipped int, err error) {
	cols := trajectoryColumns
	if f.subject == string(streams.KindMetrics) {
		cols = metricsColumns
	}
	file, err := os.Create(f.out)
	if err != nil {
		return 0, 0, fmt.Errorf("--out: %w", err)
	}
	bw := bufio.NewWriter(file) // not a Closer: the Parquet writer leaves the file to this function
	var w tableWriter
	if f.format == "parquet" {
		w, err = newParquetWriter(bw, cols)
	} else {
		w = &jsonlWriter{cols: cols, w: bw}
	}
	if err != nil {
		file.Close()
		return 0, 0, err
	}
	err = streams.Replay(ctx, js, streams.ReplayOptions{Run: f.run, Subject: streams.SubjectKind(f.subject)}, func(m streams.Message) error {
		if m.Trajectory == nil && m.Metrics == nil || f.skipWarmup && m.PRMWarmup() {
			skipped += boolInt(m.Err != nil)
			return nil
		}
		for _, r := range messageRows(m) {
			if err := w.write(r); err != nil {
				return err
			}
			rows++
		}
		return nil
	})
	if cerr := w.close(); err == nil {
		err = cerr
	}
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	return rows, skipped, err
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// row is one row of an export: a step of a trajectory, or a value of a
// metrics event.
type row struct {
	m     streams.Message
	step  int
	name  string
	value float64
}

// messageRows splits a decoded message into its rows.
func messageRows(m streams.Message) []row {
	var rows []row
	if t := m.Trajectory; t != nil {
		for i := range t.Steps {
			rows = append(rows, row{m: m, step: i})
		}
		return rows
	}
	for _, name := range sortedValueNames(m.Metrics.Values) {
		rows = append(rows, row{m: m, name: name, value: m.Metrics.Values[name]})
	}
	return rows
}

func sortedValueNames(values map[string]float64) []string {
	names := make([]string, 0, len(values))
	for n := range values {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// column is one column of an export: its name, Arrow type and value.
type column struct {
	name string
	typ  arrow.DataType
	// exact marks a 64-bit integer that can exceed 2^53: a string in JSON.
	exact bool
	value func(row) any
}

func traj(r row) *schemas.Trajectory { return r.m.Trajectory }
func step(r row) *schemas.Step       { return &r.m.Trajectory.Steps[r.step] }

var (
	str     = arrow.BinaryTypes.String
	i32     = arrow.PrimitiveTypes.Int32
	i64     = arrow.PrimitiveTypes.Int64
	u64     = arrow.PrimitiveTypes.Uint64
	f64     = arrow.PrimitiveTypes.Float64
	boolean = arrow.FixedWidthTypes.Boolean
	stamp   = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
)

// trajectoryColumns are the columns of a trajectory export, one row per
// step; docs/protocol.md's "Exporting a run" lists them.
var trajectoryColumns = []column{
	{"stream_seq", u64, false, func(r row) any { return r.m.Seq }},
	{"trajectory_id", str, false, func(r row) any { return traj(r).ID }},
	{"run", str, false, func(r row) any { return traj(r).Run }},
	{"source", str, false, func(r row) any { return string(traj(r).Source) }},
	{"cycle", i64, false, func(r row) any { return traj(r).Cycle }},
	{"policy_version", i64, false, func(r row) any { return traj(r).PolicyVersion }},
	{"producer", str, false, func(r row) any { return traj(r).Producer }},
	{"env", str, false, func(r row) any { return traj(r).Env }},
	{"task_id", str, false, func(r row) any { return traj(r).TaskID }},
	{"task_type", str, false, func(r row) any { return traj(r).TaskType }},
	{"task_seed", i64, true, func(r row) any { return traj(r).TaskSeed }},
	{"split", str, false, func(r row) any { return traj(r).Split }},
	{"group_id", str, false, func(r row) any { return traj(r).GroupID }},
	{"prm_warmup", boolean, false, func(r row) any { return r.m.PRMWarmup() }},
	{"outcome_reward", f64, false, func(r row) any { return traj(r).OutcomeReward }},
	{"success", boolean, false, func(r row) any { return traj(r).Success }},
	{"swapped", boolean, false, func(r row) any { return traj(r).Swapped }},
	{"created_at", stamp, false, func(r row) any { return traj(r).CreatedAt }},
	{"steps", i32, false, func(r row) any { return int32(len(traj(r).Steps)) }},
	{"step", i32, false, func(r row) any { return int32(r.step) }},
	{"observation", str, false, func(r row) any { return step(r).Observation }},
	{"action", str, false, func(r row) any { return step(r).Action }},
	{"action_index", i32, false, func(r row) any { return step(r).ActionIndex }},
	{"num_admissible", i32, false, func(r row) any { return step(r).NumAdmissible }},
	{"behavior_log_prob", f64, false, func(r row) any { return step(r).BehaviorLogProb }},
	{"reward", f64, false, func(r row) any { return step(r).Reward }},
	{"dense_reward", f64, false, func(r row) any { return step(r).DenseReward }},
	{"state_key", u64, true, func(r row) any { return step(r).StateKey }},
}

// metricsColumns are the columns of a metrics export, one row per value.
var metricsColumns = []column{
	{"stream_seq", u64, false, func(r row) any { return r.m.Seq }},
	{"time", stamp, false, func(r row) any { return r.m.Metrics.Time }},
	{"component", str, false, func(r row) any { return r.m.Metrics.Component }},
	{"kind", str, false, func(r row) any { return r.m.Metrics.Kind }},
	{"cycle", i64, false, func(r row) any { return r.m.Metrics.Cycle }},
	{"update", i64, false, func(r row) any { return r.m.Metrics.Update }},
	{"labels", str, false, func(r row) any { return labelsText(r.m.Metrics.Labels) }},
	{"name", str, false, func(r row) any { return r.name }},
	{"value", f64, false, func(r row) any { return r.value }},
}

// labelsText renders labels as name=value pairs sorted by name, joined by
// commas ("" for none).
func labelsText(labels map[string]string) string {
	names := make([]string, 0, len(labels))
	for k := range labels {
		names = append(names, k)
	}
	slices.Sort(names)
	for i, k := range names {
		names[i] = k + "=" + labels[k]
	}
	return strings.Join(names, ",")
}

// tableWriter writes rows to a file format.
type tableWriter interface {
	write(row) error
	close() error
}

// parquetBatch is how many rows a Parquet row group's record holds.
const parquetBatch = 4096

type parquetWriter struct {
	cols []column
	b    *array.RecordBuilder
	fw   *pqarrow.FileWriter
	n    int
}

func newParquetWriter(w io.Writer, cols []column) (*parquetWriter, error) {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.name, Type: c.typ}
	}
	schema := arrow.NewSchema(fields, nil)
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy))
	fw, err := pqarrow.NewFileWriter(schema, w, props, pqarrow.DefaultWriterProps())
	if err != nil {
		return nil, fmt.Errorf("export: parquet: %w", err)
	}
	return &parquetWriter{cols: cols, b: array.NewRecordBuilder(memory.DefaultAllocator, schema), fw: fw}, nil
}

func (p *parquetWriter) write(r row) error {
	for i, c := range p.cols {
		appendValue(p.b.Field(i), c.value(r))
	}
	if p.n++; p.n == parquetBatch {
		return p.flush()
	}
	return nil
}

func (p *parquetWriter) flush() error {
	rec := p.b.NewRecord()
	defer rec.Release()
	p.n = 0
	if err := p.fw.WriteBuffered(rec); err != nil {
		return fmt.Errorf("export: parquet: %w", err)
	}
	return nil
}

func (p *parquetWriter) close() error {
	defer p.b.Release()
	if p.n > 0 {
		if err := p.flush(); err != nil {
			return err
		}
	}
	if err := p.fw.Close(); err != nil {
		return fmt.Errorf("export: parquet: %w", err)
	}
	return nil
}

// appendValue appends v to the builder of its column's type.
func appendValue(b array.Builder, v any) {
	switch b := b.(type) {
	case *array.StringBuilder:
		b.Append(v.(string))
	case *array.Int32Builder:
		b.Append(v.(int32))
	case *array.Int64Builder:
		b.Append(v.(int64))
	case *array.Uint64Builder:
		b.Append(v.(uint64))
	case *array.Float64Builder:
		b.Append(v.(float64))
	case *array.BooleanBuilder:
		b.Append(v.(bool))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(v.(time.Time).UnixMicro()))
	default:
		panic(fmt.Sprintf("export: no builder for %T", b))
	}
}

type jsonlWriter struct {
	cols []column
	w    io.Writer
	line []byte
}

// write writes the row as one JSON object, its keys in column order.
func (j *jsonlWriter) write(r row) error {
	j.line = append(j.line[:0], '{')
	for i, c := range j.cols {
		if i > 0 {
			j.line = append(j.line, ',')
		}
		j.line = strconv.AppendQuote(j.line, c.name)
		j.line = append(j.line, ':')
		v := c.value(r)
		if c.exact {
			v = fmt.Sprint(v)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("export: column %s: %w", c.name, err)
		}
		j.line = append(j.line, b...)
	}
	j.line = append(j.line, '}', '\n')
	_, err := j.w.Write(j.line)
	return err
}

func (j *jsonlWriter) close() error { return nil }
