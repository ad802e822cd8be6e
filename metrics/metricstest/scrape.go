// Package metricstest scrapes a /metrics endpoint for the tests of the
// packages that serve one.
package metricstest

import (
	"net/http"
	"testing"

	"github.com/prometheus/common/expfmt"
)

// Scrape fetches url and returns every counter and gauge value and every
// histogram's sample count, by family name and then by the value of the
// label key ("" for a sample without it).
func Scrape(t testing.TB, url, key string) map[string]map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]float64{}
	for name, f := range fams {
		out[name] = map[string]float64{}
		for _, m := range f.GetMetric() {
			label := ""
			for _, l := range m.GetLabel() {
				if l.GetName() == key {
					label = l.GetValue()
				}
			}
			switch {
			case m.Counter != nil:
				out[name][label] = m.GetCounter().GetValue()
			case m.Gauge != nil:
				out[name][label] = m.GetGauge().GetValue()
			case m.Histogram != nil:
				out[name][label] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}
