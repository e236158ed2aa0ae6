package bootstrap

import "testing"

func TestKeepPreviousHosts(t *testing.T) {
	tests := []struct{ name, hosts, previous, want string }{
		{"first run", "[localhost]:22 ssh-ed25519 AAAA\n", "", "[localhost]:22 ssh-ed25519 AAAA\n"},
		{"same hosts", "[h]:22 ssh-ed25519 AAAA\n", "[h]:22 ssh-ed25519 AAAA\n", "[h]:22 ssh-ed25519 AAAA\n"},
		{"a move keeps the old address", "[localhost]:22 ssh-ed25519 AAAA\n", "[127.0.0.1]:22 ssh-ed25519 AAAA\n",
			"[localhost]:22 ssh-ed25519 AAAA\n[127.0.0.1]:22 ssh-ed25519 AAAA\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(keepPreviousHosts([]byte(tt.hosts), []byte(tt.previous))); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
