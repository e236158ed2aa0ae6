package app

import (
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
)

// TestShardModeFlag: --shard-mode takes off and auto, refuses anything
// else with the flag's name, and auto turns leader election off.
func TestShardModeFlag(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		auto     bool
		wantErr  string
		leader   bool
		noRunEnv bool
	}{
		{args: nil},
		{args: []string{"--shard-mode=off", "--enable-leader-election"}, leader: true},
		{args: []string{"--shard-mode=auto", "--enable-leader-election"}, auto: true},
		{args: []string{"--shard-mode=auto", "--shard-group=fleet"}, auto: true},
		{args: []string{"--shard-mode=hash"}, wantErr: "--shard-mode=hash: want off or auto"},
		{args: []string{"--shard-mode=auto"}, noRunEnv: true, wantErr: "--shard-mode=auto needs the RUNTIME_NAMESPACE"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			ns := "weir-system"
			if tc.noRunEnv {
				ns = ""
			}
			t.Setenv("RUNTIME_NAMESPACE", ns)
			o := DefaultOptions()
			fs := pflag.NewFlagSet("weir-controller", pflag.ContinueOnError)
			o.AddFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			_, err := o.Selected()
			var cfg rest.Config
			if err == nil {
				_, err = joinShards(&cfg, &o, logr.Discard())
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.autoSharding() != tc.auto || o.EnableLeaderElection != tc.leader {
				t.Errorf("auto %v, leader election %v; want %v, %v", o.autoSharding(), o.EnableLeaderElection, tc.auto, tc.leader)
			}
			if got := cfg.WrapTransport != nil; got != tc.auto {
				t.Errorf("writes fenced: %v, want %v", got, tc.auto)
			}
		})
	}
}
