package experiments

import (
	"fmt"
	"testing"
)

func TestEvenlySpaced(t *testing.T) {
	xs := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	tests := []struct {
		name string
		n    int
		want []int
	}{
		{name: "all", n: 0, want: xs},
		{name: "more than there are", n: 20, want: xs},
		{name: "half", n: 5, want: []int{0, 2, 4, 6, 8}},
		{name: "three", n: 3, want: []int{0, 3, 6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := evenlySpaced(xs, tt.n)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
