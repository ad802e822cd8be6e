package report

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// page is what the tests read from report.html.
type page struct {
	title, h1 string
	images    []string // src of every img
	refs      []string // every src and href
	captions  []string
	cells     []string // th and td text, in document order
	headings  []string // h2 text
	folded    string   // the text of the details' summary element
	// order lists the page's parts as they come: "result" (the headline's
	// table), "figure", "details" (the folded summary).
	order []string
}

// parsePage parses report.html as well-formed markup (every element
// closed, attributes quoted) and collects what the tests check.
func parsePage(t *testing.T, b []byte) page {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	dec.Strict = true
	var p page
	var stack []string
	var text strings.Builder
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("report.html does not parse: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if len(stack) == 0 && e.Name.Local != "html" {
				t.Fatalf("root element %s, want html", e.Name.Local)
			}
			stack = append(stack, e.Name.Local)
			text.Reset()
			p.mark(e)
			for _, a := range e.Attr {
				if a.Name.Local == "src" || a.Name.Local == "href" {
					p.refs = append(p.refs, a.Value)
				}
				if e.Name.Local == "img" && a.Name.Local == "src" {
					p.images = append(p.images, a.Value)
				}
			}
		case xml.CharData:
			text.Write(e)
		case xml.EndElement:
			p.collect(e.Name.Local, strings.TrimSpace(text.String()))
			stack = stack[:len(stack)-1]
			text.Reset()
		}
	}
	if len(stack) != 0 {
		t.Fatalf("unclosed elements: %v", stack)
	}
	return p
}

// mark notes where a part of the page starts.
func (p *page) mark(e xml.StartElement) {
	switch e.Name.Local {
	case "figure", "details":
		p.order = append(p.order, e.Name.Local)
	case "table":
		for _, a := range e.Attr {
			if a.Name.Local == "class" && a.Value == "result" {
				p.order = append(p.order, "result")
			}
		}
	}
}

func (p *page) collect(element, text string) {
	switch element {
	case "summary":
		p.folded = text
	case "title":
		p.title = text
	case "h1":
		p.h1 = text
	case "h2":
		p.headings = append(p.headings, text)
	case "figcaption", "span":
		if text != "" {
			p.captions = append(p.captions, text)
		}
	case "th", "td":
		if text != "" {
			p.cells = append(p.cells, text)
		}
	}
}

type testSummary struct {
	Run     string             `json:"run"`
	Updates int64              `json:"updates"`
	Final   map[string]float64 `json:"final"`
	Note    string             `json:"note"`
	Seeds   []int              `json:"seeds"`
}

func writeReport(t *testing.T, summary any) (string, []string, page) {
	t.Helper()
	dir := t.TempDir()
	evs := shortRunEvents()
	for i := range evs {
		evs[i].Run = "household-grpo-s1"
	}
	written, err := Write(dir, evs, summary)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(written, filepath.Join(dir, "report.html")) {
		t.Fatalf("report.html not among the files written: %v", written)
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	return dir, written, parsePage(t, b)
}

func TestHTMLEmbedsEveryPlotWritten(t *testing.T) {
	_, written, p := writeReport(t, testSummary{Run: "household-grpo-s1"})
	var pngs [][]byte
	for _, path := range written {
		if filepath.Ext(path) == ".png" {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			pngs = append(pngs, b)
		}
	}
	if len(pngs) != len(DefaultPlots) {
		t.Fatalf("plots written: %d, want %d", len(pngs), len(DefaultPlots))
	}
	if len(p.images) != len(pngs) {
		t.Fatalf("images in the page: %d, plots written: %d", len(p.images), len(pngs))
	}
	for i, src := range p.images {
		data, ok := strings.CutPrefix(src, "data:image/png;base64,")
		if !ok {
			t.Fatalf("image %d is not an inline PNG: %.40q", i, src)
		}
		b, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			t.Fatalf("image %d: %v", i, err)
		}
		if !bytes.Equal(b, pngs[i]) {
			t.Errorf("image %d is not the bytes of plot %d", i, i)
		}
	}
	for _, ref := range p.refs {
		if !strings.HasPrefix(ref, "data:") {
			t.Errorf("page refers to an outside resource %q", ref)
		}
	}
}

func TestHTMLHasTitleSummaryAndCaptions(t *testing.T) {
	sum := testSummary{Run: "household-grpo-s1", Updates: 6, Note: "a < b & c",
		Final: map[string]float64{"eval_in_distribution_success_rate": 0.3}, Seeds: []int{1, 2}}
	_, _, p := writeReport(t, sum)
	if p.title != "Training report: household-grpo-s1" || p.h1 != p.title {
		t.Errorf("title %q, h1 %q", p.title, p.h1)
	}
	if !slices.Equal(p.headings, []string{"Plots"}) || p.folded != "Every figure (summary.json)" {
		t.Errorf("sections: %v, folded %q", p.headings, p.folded)
	}
	want := []string{"run", "household-grpo-s1", "updates", "6", "final",
		"eval_in_distribution_success_rate", "0.3", "note", "a < b & c", "seeds"}
	if got := p.cells; !slices.Equal(got, want) {
		t.Errorf("summary cells:\n got %q\nwant %q", got, want)
	}
	if !slices.Contains(p.captions, clipZeroNote) {
		t.Errorf("the clip plot's note is not a caption: %q", p.captions)
	}
	if !slices.Contains(p.captions, "Dense (PRM) return vs true success") {
		t.Errorf("plot titles are not captions: %q", p.captions)
	}
}

func TestHTMLWithoutSummaryHasNoSummarySection(t *testing.T) {
	_, _, p := writeReport(t, nil)
	if slices.Contains(p.headings, "Summary") || len(p.cells) != 0 {
		t.Errorf("sections %v, cells %v", p.headings, p.cells)
	}
}

func TestJSONRendersAsNestedTables(t *testing.T) {
	tests := []struct {
		name string
		json string
		want string
	}{
		{"scalar", `1.5`, `1.5`},
		{"keys keep their order", `{"b":1,"a":true}`, `<table><tr><th>b</th><td>1</td></tr><tr><th>a</th><td>true</td></tr></table>`},
		{"nested", `{"final":{"x":null}}`, `<table><tr><th>final</th><td><table><tr><th>x</th><td>null</td></tr></table></td></tr></table>`},
		{"list", `[1,"<b>"]`, `<ol><li>1</li><li>&lt;b&gt;</li></ol>`},
		{"escaped key", `{"a&b":""}`, `<table><tr><th>a&amp;b</th><td></td></tr></table>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := writeJSONHTML(&b, []byte(tt.json)); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("got %s, want %s", b.String(), tt.want)
			}
		})
	}
}

// The page opens on the result: the headline's table comes before every
// plot, and the raw summary after them, folded.
func TestHTMLLeadsWithTheResult(t *testing.T) {
	dir := t.TempDir()
	h := &Headline{Lead: "RSPO with GRPO on household, 30 updates, seed 1.",
		Columns: []string{"success in distribution", "environment steps", "wall time", "peak memory"},
		Rows: []HeadlineRow{
			{Name: "this run", Cells: []string{FormatFraction(0.7234), FormatSteps(1_234_567), FormatDuration(228), FormatBytes(1 << 30)}},
			{Name: "GRPO alone", Cells: []string{FormatFraction(0.61), "", FormatDuration(200.4), FormatBytes(900 << 20)}},
		}}
	sum := testSummary{Run: "household-grpo-s1", Updates: 30, Final: map[string]float64{"eval_in_distribution_success_rate": 0.7234}}
	if _, err := WritePage(dir, shortRunEvents(), Page{Headline: h, Summary: sum}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	p := parsePage(t, b)
	if len(p.order) < 3 || p.order[0] != "result" || p.order[len(p.order)-1] != "details" ||
		slices.Contains(p.order[1:len(p.order)-1], "result") || slices.Contains(p.order[:len(p.order)-1], "details") {
		t.Errorf("page parts in order %v, want the result, the figures, then the folded summary", p.order)
	}
	if !slices.Equal(p.headings, []string{"Result", "Plots"}) {
		t.Errorf("sections %v", p.headings)
	}
	want := []string{"success in distribution", "environment steps", "wall time", "peak memory",
		"this run", "0.72", "1.23 M steps", "3 min 48 s", "1.0 GiB", "GRPO alone", "0.61", "–", "3 min 20 s", "900 MiB"}
	if got := p.cells[:len(want)]; !slices.Equal(got, want) {
		t.Errorf("result cells\n got %q\nwant %q", got, want)
	}
	if !strings.Contains(string(b), `<p class="lead">RSPO with GRPO on household, 30 updates, seed 1.</p>`) {
		t.Error("the lead sentence is missing")
	}
}
