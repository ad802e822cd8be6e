package buffersvc_test

import (
	"fmt"
	"os"

	"github.com/rspo-dev/rspo/buffersvc"
)

// Records come out by outcome reward, then more distinct states, then fewer
// repeated visits; preferred tasks' records first.
func ExampleStore_Sample() {
	dir, _ := os.MkdirTemp("", "buffer-example-")
	defer os.RemoveAll(dir)
	store, err := buffersvc.Open(dir, buffersvc.Options{})
	if err != nil {
		panic(err)
	}
	defer store.Close()
	rec := func(id, task string, reward float64, distinct, repeats int32) buffersvc.Entry {
		return buffersvc.Entry{Run: "demo", Cycle: 1, ID: id, TaskID: task, Reward: reward,
			Distinct: distinct, Repeats: repeats, Data: []byte(id)}
	}
	_, err = store.Put([]buffersvc.Entry{
		rec("fail-wide", "pick", 0, 20, 0),
		rec("win-loopy", "heat", 1, 6, 9),
		rec("win-wide", "pick", 1, 12, 0),
		rec("win-narrow", "pick", 1, 6, 3),
		rec("partial", "heat", 0.5, 9, 1),
	})
	if err != nil {
		panic(err)
	}
	for _, prefer := range [][]string{nil, {"heat"}} {
		got, _ := store.Sample("demo", buffersvc.SampleRequest{Cycle: 1, Count: 4, PreferTasks: prefer})
		fmt.Print("prefer ", prefer, ":")
		for _, e := range got {
			fmt.Print(" ", e.ID)
		}
		fmt.Println()
	}
	// Output:
	// prefer []: win-wide win-narrow win-loopy partial
	// prefer [heat]: win-loopy partial win-wide win-narrow
}
