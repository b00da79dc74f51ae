package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/foya-dev/foya/core"
)

// CreateProject implements core.ProjectStore. A second project for the same
// directory is a conflict.
func (d *DB) CreateProject(ctx context.Context, p core.Project) error {
	return d.w.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var existing projectRow
		err := tx.NewSelect().Model(&existing).Where("path = ?", p.Path).Scan(ctx)
		if err == nil {
			return core.Errorf(core.CodeConflict, "directory %s is already project %s (%s); use that project", p.Path, existing.ID, existing.Name)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("find project by path: %w", err)
		}
		row := projectRow{ID: p.ID, Name: p.Name, Path: p.Path, CreatedAt: fmtTime(p.CreatedAt)}
		if _, err := tx.NewInsert().Model(&row).Exec(ctx); err != nil {
			if isUniqueViolation(err) {
				return core.Errorf(core.CodeConflict, "directory %s or id %s is already a project; use that project", p.Path, p.ID)
			}
			return fmt.Errorf("insert project %s: %w", p.ID, err)
		}
		return nil
	})
}

// Project's query, on SQLite and on PostgreSQL.
const (
	projectByIDSQL   = "SELECT id, name, path, created_at FROM projects WHERE id = ?"
	projectByIDSQLPG = "SELECT id, name, path, created_at FROM projects WHERE id = $1"
)

// Project implements core.ProjectStore. The query is prepared once on the
// SQLite readers (listQuery): a session list looks up its page's projects,
// a page at a time.
func (d *DB) Project(ctx context.Context, id string) (core.Project, error) {
	query := projectByIDSQL
	if d.pg {
		query = projectByIDSQLPG
	}
	var row projectRow
	rows, err := d.listQuery(ctx, query, noNUL(id))
	if err == nil {
		if rows.Next() {
			err = rows.Scan(&row.ID, &row.Name, &row.Path, &row.CreatedAt)
		} else {
			err = sql.ErrNoRows
		}
		err = errors.Join(err, rows.Err(), rows.Close())
	}
	if errors.Is(err, sql.ErrNoRows) {
		return core.Project{}, core.Errorf(core.CodeNotFound, "project %s not found", id)
	}
	if err != nil {
		return core.Project{}, fmt.Errorf("read project %s: %w", id, err)
	}
	return row.project()
}

// Projects implements core.ProjectStore, oldest first.
func (d *DB) Projects(ctx context.Context) ([]core.Project, error) {
	var rows []projectRow
	if err := d.r.NewSelect().Model(&rows).OrderExpr("created_at, id").Scan(ctx); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	return mapRows(rows, projectRow.project)
}

// DeleteProject implements core.ProjectStore. It removes only the row; the
// session service deletes the bound sessions first.
func (d *DB) DeleteProject(ctx context.Context, id string) error {
	res, err := d.w.NewDelete().Table("projects").Where("id = ?", id).Exec(ctx)
	if err != nil {
		return fmt.Errorf("delete project %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return core.Errorf(core.CodeNotFound, "project %s not found", id)
	}
	return nil
}
