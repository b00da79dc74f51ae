-- Nothing to change on PostgreSQL: its tables are heaps and their primary
-- key indexes hold only the keys (the SQLite migration of the same name
-- gives SQLite the same layout).
SELECT 1;
