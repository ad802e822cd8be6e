package report

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rspo-dev/rspo/schemas"
)

// htmlStyle is the page's only styling; the page loads nothing.
const htmlStyle = `body{font-family:sans-serif;max-width:60em;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.2em 0}
th,td{border:1px solid #ccc;padding:.2em .6em;text-align:left;vertical-align:top}
th{background:#f4f4f4;font-weight:normal}
td table{margin:0}
table.result{font-size:1.15em}
table.result td{text-align:right;white-space:nowrap}
.lead{font-size:1.1em}
figure{margin:2em 0}
img{max-width:100%;height:auto}
figcaption{margin-top:.4em}
details{margin:2em 0}
summary{cursor:pointer;font-weight:bold}
.note{color:#555}`

// writeHTML writes report.html: a title, the headline of the result, every
// figure inline as a PNG data URI, then the summary as nested tables,
// folded: the first screen is the result, the raw figures a click away.
func writeHTML(dir, title string, page Page, figs []figure) (string, error) {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n")
	fmt.Fprintf(&b, "<title>%s</title>\n<style>%s</style>\n</head>\n<body>\n<h1>%[1]s</h1>\n", html.EscapeString(title), htmlStyle)
	if page.Headline != nil {
		writeHeadline(&b, *page.Headline)
	}
	if len(figs) > 0 {
		b.WriteString("<h2>Plots</h2>\n")
	}
	for _, f := range figs {
		if err := writeFigure(&b, f); err != nil {
			return "", err
		}
	}
	if page.Summary != nil {
		if err := writeSummary(&b, page.Summary); err != nil {
			return "", err
		}
	}
	b.WriteString("</body>\n</html>\n")
	path := filepath.Join(dir, "report.html")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return "", fmt.Errorf("report: %w", err)
	}
	return path, nil
}

// writeHeadline writes the result: the lead sentence and a table of a
// row per run.
func writeHeadline(b *strings.Builder, h Headline) {
	b.WriteString("<h2>Result</h2>\n")
	if h.Lead != "" {
		fmt.Fprintf(b, "<p class=\"lead\">%s</p>\n", html.EscapeString(h.Lead))
	}
	if len(h.Rows) == 0 {
		return
	}
	b.WriteString("<table class=\"result\">\n<tr><th></th>")
	for _, c := range h.Columns {
		fmt.Fprintf(b, "<th>%s</th>", html.EscapeString(c))
	}
	b.WriteString("</tr>\n")
	for _, r := range h.Rows {
		fmt.Fprintf(b, "<tr><th>%s</th>", html.EscapeString(r.Name))
		for i := range h.Columns {
			cell := "–"
			if i < len(r.Cells) && r.Cells[i] != "" {
				cell = r.Cells[i]
			}
			fmt.Fprintf(b, "<td>%s</td>", html.EscapeString(cell))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n")
}

// writeSummary writes the summary as nested tables inside a folded
// details element.
func writeSummary(b *strings.Builder, summary any) error {
	raw, err := json.Marshal(summary)
	if err != nil {
		return fmt.Errorf("report: summary: %w", err)
	}
	b.WriteString("<details id=\"summary\">\n<summary>Every figure (summary.json)</summary>\n")
	if err := writeJSONHTML(b, raw); err != nil {
		return fmt.Errorf("report: summary: %w", err)
	}
	b.WriteString("\n</details>\n")
	return nil
}

// htmlTitle names the page after the events' run.
func htmlTitle(events []schemas.MetricsEvent) string {
	for _, m := range events {
		if m.Run != "" {
			return "Training report: " + m.Run
		}
	}
	return "Training report"
}

func writeFigure(b *strings.Builder, f figure) error {
	png, err := os.ReadFile(f.path)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	name := strings.TrimSuffix(filepath.Base(f.path), filepath.Ext(f.path))
	fmt.Fprintf(b, "<figure id=\"%s\">\n<img src=\"data:image/png;base64,%s\" alt=\"%s\"/>\n<figcaption>%[3]s",
		html.EscapeString(name), base64.StdEncoding.EncodeToString(png), html.EscapeString(f.title))
	if f.note != "" {
		fmt.Fprintf(b, "<br/><span class=\"note\">%s</span>", html.EscapeString(f.note))
	}
	b.WriteString("</figcaption>\n</figure>\n")
	return nil
}

// writeJSONHTML renders a JSON value: an object as a table of its keys in
// their order, an array as a list, a scalar as its text.
func writeJSONHTML(b *strings.Builder, raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return writeJSONValue(b, dec)
}

func writeJSONValue(b *strings.Builder, dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch v := tok.(type) {
	case json.Delim:
		if v == '{' {
			return writeJSONObject(b, dec)
		}
		return writeJSONArray(b, dec)
	case string:
		b.WriteString(html.EscapeString(v))
	case json.Number:
		b.WriteString(v.String())
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case nil:
		b.WriteString("null")
	}
	return nil
}

func writeJSONObject(b *strings.Builder, dec *json.Decoder) error {
	b.WriteString("<table>")
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return err
		}
		fmt.Fprintf(b, "<tr><th>%s</th><td>", html.EscapeString(key.(string)))
		if err := writeJSONValue(b, dec); err != nil {
			return err
		}
		b.WriteString("</td></tr>")
	}
	b.WriteString("</table>")
	_, err := dec.Token() // the closing brace
	return err
}

func writeJSONArray(b *strings.Builder, dec *json.Decoder) error {
	b.WriteString("<ol>")
	for dec.More() {
		b.WriteString("<li>")
		if err := writeJSONValue(b, dec); err != nil {
			return err
		}
		b.WriteString("</li>")
	}
	b.WriteString("</ol>")
	_, err := dec.Token() // the closing bracket
	return err
}
