//! Small builders shared by the migrations, so every table, index and key is named the same way.

use sea_orm_migration::prelude::*;

/// `CREATE TABLE <name>` (without `IF NOT EXISTS`: a migration that finds its table already
/// there is a bug worth failing on).
pub fn table<T: IntoTableRef>(name: T) -> TableCreateStatement {
    Table::create().table(name).take()
}

/// `DROP TABLE IF EXISTS <name>`.
pub fn drop<T: IntoTableRef>(name: T) -> TableDropStatement {
    Table::drop().table(name).if_exists().take()
}

/// A non-unique index `name` on `table(cols...)`.
pub fn index<T, C, I>(name: &str, table: T, cols: I) -> IndexCreateStatement
where
    T: IntoTableRef,
    C: IntoIndexColumn,
    I: IntoIterator<Item = C>,
{
    let mut stmt = Index::create();
    stmt.name(name).table(table);
    for col in cols {
        stmt.col(col);
    }
    stmt.take()
}

/// A composite primary key, for use inside `CREATE TABLE`.
pub fn primary_key<C, I>(name: &str, cols: I) -> IndexCreateStatement
where
    C: IntoIndexColumn,
    I: IntoIterator<Item = C>,
{
    let mut stmt = Index::create();
    stmt.name(name).primary();
    for col in cols {
        stmt.col(col);
    }
    stmt.take()
}

/// A named unique constraint, for use inside `CREATE TABLE`.
pub fn unique<C, I>(name: &str, cols: I) -> IndexCreateStatement
where
    C: IntoIndexColumn,
    I: IntoIterator<Item = C>,
{
    let mut stmt = Index::create();
    stmt.name(name).unique();
    for col in cols {
        stmt.col(col);
    }
    stmt.take()
}

/// A named foreign key, for use inside `CREATE TABLE`.
pub fn foreign_key<T, C, R, D>(
    name: &str,
    from: (T, C),
    to: (R, D),
    on_delete: ForeignKeyAction,
) -> ForeignKeyCreateStatement
where
    T: IntoTableRef,
    C: IdenList,
    R: IntoTableRef,
    D: IdenList,
{
    ForeignKey::create()
        .name(name)
        .from(from.0, from.1)
        .to(to.0, to.1)
        .on_delete(on_delete)
        .take()
}

/// A `NOT NULL` timestamp with time zone (UTC by convention).
pub fn ts<T: IntoIden>(col: T) -> ColumnDef {
    ColumnDef::new(col)
        .timestamp_with_time_zone()
        .not_null()
        .take()
}

/// A nullable timestamp with time zone (UTC by convention).
pub fn ts_null<T: IntoIden>(col: T) -> ColumnDef {
    ColumnDef::new(col).timestamp_with_time_zone().null().take()
}

/// Adds `columns` to `table`, one statement each (SQLite alters one column per statement).
pub async fn add_columns(
    manager: &SchemaManager<'_>,
    table: impl IntoTableRef,
    columns: Vec<ColumnDef>,
) -> Result<(), DbErr> {
    let table = table.into_table_ref();
    for column in columns {
        manager
            .alter_table(
                Table::alter()
                    .table(table.clone())
                    .add_column(column)
                    .take(),
            )
            .await?;
    }
    Ok(())
}

/// Drops the columns [`add_columns`] added, by their names.
pub async fn drop_columns(
    manager: &SchemaManager<'_>,
    table: impl IntoTableRef,
    columns: Vec<ColumnDef>,
) -> Result<(), DbErr> {
    let table = table.into_table_ref();
    for column in columns {
        let name = column.get_column_name();
        manager
            .alter_table(
                Table::alter()
                    .table(table.clone())
                    .drop_column(Alias::new(name))
                    .take(),
            )
            .await?;
    }
    Ok(())
}
