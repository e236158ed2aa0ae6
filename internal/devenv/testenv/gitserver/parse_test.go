package gitserver

import "testing"

func TestParseGitCommand(t *testing.T) {
	tests := []struct {
		command     string
		wantService string
		wantRepo    string
		wantErr     bool
	}{
		{command: "git-upload-pack '/org/app.git'", wantService: "upload-pack", wantRepo: "org/app.git"},
		{command: "git-receive-pack 'org/app.git'", wantService: "receive-pack", wantRepo: "org/app.git"},
		{command: "git-upload-pack /app.git", wantService: "upload-pack", wantRepo: "app.git"},
		{command: "git-upload-pack '/org/../app.git'", wantService: "upload-pack", wantRepo: "app.git"},
		{command: "git-upload-pack '../../etc'", wantErr: true},
		{command: "git-upload-pack '/../../etc'", wantErr: true},
		{command: "git-upload-pack '/org/../../etc'", wantErr: true},
		{command: "git-upload-pack ''", wantErr: true},
		{command: "git-upload-pack 'a'\\''b'", wantErr: true},
		{command: "git-upload-archive '/org/app.git'", wantErr: true},
		{command: "sh -c id", wantErr: true},
		{command: "git-upload-pack", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.command, func(t *testing.T) {
			service, repo, err := parseGitCommand(tt.command)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseGitCommand(%q) error = %v, want error %v", tt.command, err, tt.wantErr)
			}
			if service != tt.wantService || repo != tt.wantRepo {
				t.Errorf("parseGitCommand(%q) = %q, %q; want %q, %q", tt.command, service, repo, tt.wantService, tt.wantRepo)
			}
		})
	}
}
