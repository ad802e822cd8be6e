package report

import "testing"

func TestFormatsForPeople(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{FormatFraction(0.7234), "0.72"},
		{FormatFraction(1), "1.00"},
		{FormatSteps(0), "0 steps"},
		{FormatSteps(950), "950 steps"},
		{FormatSteps(37_749), "37.7 k steps"},
		{FormatSteps(196_020), "196 k steps"},
		{FormatSteps(1_200_000), "1.2 M steps"},
		{FormatSteps(1_080_333), "1.08 M steps"},
		{FormatBytes(512), "512 B"},
		{FormatBytes(512 << 20), "512 MiB"},
		{FormatBytes(1055883264), "1.0 GiB"},
		{FormatBytes(1649 << 20), "1.6 GiB"},
		{FormatDuration(4.23), "4.2 s"},
		{FormatDuration(48.4), "48 s"},
		{FormatDuration(227.833403319), "3 min 48 s"},
		{FormatDuration(3600 + 5*60 + 10), "1 h 5 min"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
