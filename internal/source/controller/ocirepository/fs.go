package ocirepository

import (
	"fmt"
	"os"

	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
)

func tempDir(obj *sourcev1.OCIRepository) (string, error) {
	dir, err := os.MkdirTemp("", fmt.Sprintf("ocirepository-%s-%s-", obj.Namespace, obj.Name))
	if err != nil {
		return "", fmt.Errorf("failed to create temporary working directory: %w", err)
	}
	return dir, nil
}

func removeAll(dir string) { _ = os.RemoveAll(dir) }
