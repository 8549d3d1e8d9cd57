/**
 * The databases the migrations are written for. Declared here, not taken from src/db/database.ts,
 * so that nothing under src/db/migrations imports the app's code: a migration must do the same on
 * every upgrade, whatever the app has become. A database the app opens must be one of these, or
 * `boardMigrations` does not compile.
 */
export type Dialect = 'sqlite' | 'postgres';
