package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/rspo-dev/rspo/pipeline"
)

// registerReplicas adds --replicas to a command that runs stages: the
// replica count it ensures the streams and buckets with at start.
func (f *natsFlags) registerReplicas(fs *pflag.FlagSet) {
	fs.IntVar(&f.replicas, "replicas", 0, "copies of every stream and bucket on a JetStream cluster, 1..5 "+
		"(scales existing ones; 0 keeps them as they are, new ones get 1)")
}

// applyReplicas sets cfg's stream replicas from --replicas.
func (f *natsFlags) applyReplicas(cfg *pipeline.Config) error {
	if f.replicas < 0 || f.replicas > 5 {
		return fmt.Errorf("--replicas %d not in 1..5 (0 keeps the streams as they are)", f.replicas)
	}
	cfg.Streams.Replicas = f.replicas
	return nil
}
