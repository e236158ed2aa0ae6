package chart

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

func TestLoadArchiveHostile(t *testing.T) {
	chartFile := testenv.TarEntry{Name: "app/Chart.yaml", Body: chartYAML("app", "1.0.0")}
	tests := []struct {
		name    string
		data    []byte
		limits  Limits
		wantErr string
		check   func(t *testing.T, files map[string]string)
	}{
		{name: "parent directory", data: testenv.TarGz(t, chartFile, testenv.TarEntry{Name: "app/../../etc/passwd", Body: "x"}),
			wantErr: "chart illegally references parent directory"},
		{name: "absolute path", data: testenv.TarGz(t, chartFile, testenv.TarEntry{Name: "app//etc/passwd", Body: "x"}),
			wantErr: "absolute paths"},
		{name: "file over the file limit", data: testenv.TarGz(t, chartFile, testenv.TarEntry{Name: "app/big.txt", Body: strings.Repeat("x", 2048)}),
			limits: Limits{MaxFileSize: 1024}, wantErr: "cannot load file app/big.txt as file size (2048) exceeds limit (1024)"},
		{name: "archive over the chart limit", data: packaged(t, "app", "1.0.0"), limits: Limits{MaxChartSize: 64},
			wantErr: "size of chart 'archive' exceeds '64' bytes limit"},
		{name: "symlink out is an empty file, never followed", data: testenv.TarGz(t, chartFile,
			testenv.TarEntry{Name: "app/templates/leak.yaml", Link: "/etc/passwd"}),
			check: func(t *testing.T, files map[string]string) {
				if body, ok := files["templates/leak.yaml"]; ok && body != "" {
					t.Errorf("link entry loaded as %q", body)
				}
			}},
		{name: "hard link out is an empty file", data: testenv.TarGz(t, chartFile,
			testenv.TarEntry{Name: "app/templates/leak.yaml", Link: "../../etc/passwd", Hard: true}),
			check: func(t *testing.T, files map[string]string) {
				if body := files["templates/leak.yaml"]; body != "" {
					t.Errorf("hard link entry loaded as %q", body)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch, err := LoadArchive(tt.data, tt.limits)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			files := map[string]string{}
			for _, f := range append(ch.Templates, ch.Files...) {
				files[f.Name] = string(f.Data)
			}
			tt.check(t, files)
		})
	}
}

func TestReadArchiveBounded(t *testing.T) {
	data := packaged(t, "app", "1.0.0")
	p := filepath.Join(t.TempDir(), "app-1.0.0.tgz")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadArchiveFile(p, Limits{MaxChartSize: int64(len(data))}); err != nil {
		t.Fatalf("archive at the limit: %v", err)
	}
	_, err := ReadArchiveFile(p, Limits{MaxChartSize: int64(len(data)) - 1})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "size of chart 'app-1.0.0.tgz' exceeds") {
		t.Fatalf("archive over the limit: %v", err)
	}
	if _, err := ReadArchive(strings.NewReader(string(data)), "stream", Limits{MaxChartSize: 10}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("stream over the limit: %v", err)
	}
}

func TestLoadDirRefusesEscapes(t *testing.T) {
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"secret.yaml": "password: hunter2\n"})
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"charts/app/Chart.yaml":           chartYAML("app", "1.0.0"),
		"charts/app/templates/cm.yaml":    "kind: ConfigMap\n",
		"shared/common.yaml":              "kind: Secret\n",
		"charts/big/Chart.yaml":           chartYAML("big", "1.0.0"),
		"charts/big/files/blob.bin":       strings.Repeat("x", 4096),
		"charts/ignored/Chart.yaml":       chartYAML("ignored", "1.0.0"),
		"charts/ignored/.helmignore":      "blob.bin\n",
		"charts/ignored/blob.bin":         strings.Repeat("x", 4096),
		"charts/cycle/Chart.yaml":         chartYAML("cycle", "1.0.0"),
		"charts/linkout/Chart.yaml":       chartYAML("linkout", "1.0.0"),
		"charts/linkin/Chart.yaml":        chartYAML("linkin", "1.0.0"),
		"charts/linkin/templates/cm.yaml": "kind: ConfigMap\n",
		"charts/dirlink/Chart.yaml":       chartYAML("dirlink", "1.0.0"),
	})
	symlink(t, filepath.Join(outside, "secret.yaml"), filepath.Join(root, "charts/linkout/templates/secret.yaml"))
	symlink(t, "../../../shared/common.yaml", filepath.Join(root, "charts/linkin/templates/common.yaml"))
	symlink(t, "..", filepath.Join(root, "charts/cycle/templates/loop"))
	symlink(t, outside, filepath.Join(root, "charts/dirlink/templates"))
	symlink(t, outside, filepath.Join(root, "escape"))

	tests := []struct {
		name, path string
		limits     Limits
		wantErr    string
		wantFiles  []string
	}{
		{name: "plain chart", path: "charts/app", wantFiles: []string{"templates/cm.yaml"}},
		{name: "dot slash path", path: "./charts/app", wantFiles: []string{"templates/cm.yaml"}},
		{name: "link inside the root is followed", path: "charts/linkin", wantFiles: []string{"templates/cm.yaml", "templates/common.yaml"}},
		{name: "link to a file outside", path: "charts/linkout", wantErr: "link 'templates/secret.yaml' resolves to a location outside the source"},
		{name: "link to a directory outside", path: "charts/dirlink", wantErr: "link 'templates' resolves to a location outside the source"},
		{name: "link cycle", path: "charts/cycle", wantErr: "link cycle"},
		{name: "chart path climbing out", path: "../outside", wantErr: "path escapes the source root"},
		{name: "absolute chart path", path: "/etc", wantErr: "path escapes the source root"},
		{name: "chart path through a link out", path: "escape", wantErr: "resolves to a location outside the source"},
		{name: "missing chart path", path: "charts/none", wantErr: "no such file or directory"},
		{name: "file over the file limit", path: "charts/big", limits: Limits{MaxFileSize: 1024}, wantErr: "cannot load file files/blob.bin as file size (4096) exceeds limit (1024)"},
		{name: "helmignored file is not read", path: "charts/ignored", limits: Limits{MaxFileSize: 1024}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch, err := LoadDir(root, tt.path, tt.limits)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), root) || strings.Contains(err.Error(), outside) {
					t.Errorf("error names a temporary directory: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range ch.Templates {
				got = append(got, f.Name)
			}
			if strings.Join(got, ",") != strings.Join(tt.wantFiles, ",") {
				t.Errorf("templates = %v, want %v", got, tt.wantFiles)
			}
		})
	}
}

func symlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
