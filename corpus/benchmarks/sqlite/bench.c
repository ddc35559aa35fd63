/* SQLite benchmark driver (corpus/recipes/sqlite.sh): an in-memory database
 * with two tables (customers, orders with a foreign key), filled from a fixed
 * LCG inside one transaction through prepared statements, then indexed and
 * queried: a join, GROUP BY with aggregates, ORDER BY with LIMIT, a LIKE
 * filter, a subquery, an UPDATE and a DELETE. This runs the parser, planner,
 * VDBE, B-tree and pager code that an embedded database spends its time in.
 * Prints each query's row count and an FNV-1a hash of its rows as text, and
 * the rows changed by the UPDATE and DELETE. The number of orders comes from
 * the file given on the command line. Exits 1 on any error. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sqlite3.h"

static sqlite3 *db;
static uint64_t lcg_state = 20240601;

static unsigned lcg(unsigned range) {
  lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (unsigned)((lcg_state >> 33) % range);
}

static void fail(const char *what) {
  fprintf(stderr, "bench-sqlite: %s: %s\n", what, sqlite3_errmsg(db));
  exit(1);
}

static void exec(const char *sql) {
  char *message = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &message) != SQLITE_OK) {
    fprintf(stderr, "bench-sqlite: %s: %s\n", sql, message ? message : "error");
    exit(1);
  }
}

static sqlite3_stmt *prepare(const char *sql) {
  sqlite3_stmt *stmt = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) != SQLITE_OK) fail(sql);
  return stmt;
}

/* Runs a query; prints its row count and a hash of every value as text. */
static void query(const char *label, const char *sql) {
  sqlite3_stmt *stmt = prepare(sql);
  uint64_t hash = 14695981039346656037ULL;
  long rows = 0;
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    rows++;
    for (int i = 0; i < sqlite3_column_count(stmt); i++) {
      const unsigned char *text = sqlite3_column_text(stmt, i);
      for (const unsigned char *p = text ? text : (const unsigned char *)"NULL"; *p; p++)
        hash = (hash ^ *p) * 1099511628211ULL;
      hash = (hash ^ '|') * 1099511628211ULL;
    }
  }
  if (rc != SQLITE_DONE) fail(sql);
  sqlite3_finalize(stmt);
  printf("%s: %ld rows, fnv1a %016llx\n", label, rows, (unsigned long long)hash);
}

static void change(const char *label, const char *sql) {
  exec(sql);
  printf("%s: %d rows changed\n", label, sqlite3_changes(db));
}

int main(int argc, char **argv) {
  static const char *syllables[] = {"ka", "to", "ri", "mu", "sen", "lo", "va", "ne", "shi", "po"};
  static const char *cities[] = {"Aberdeen", "Bergen", "Cork", "Delft", "Essen", "Faro",
                                 "Graz", "Hull", "Izmir", "Jena", "Kiel", "Lyon"};
  long orders = 0;
  FILE *f = argc == 2 ? fopen(argv[1], "r") : NULL;
  if (!f || fscanf(f, "%ld", &orders) != 1 || orders < 10) {
    fprintf(stderr, "usage: bench-sqlite PARAMS (a file holding the number of orders, >= 10)\n");
    return 2;
  }
  fclose(f);
  long customers = orders / 4;
  if (sqlite3_open(":memory:", &db) != SQLITE_OK) fail("open");
  exec("CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT, score REAL);"
       "CREATE TABLE orders(id INTEGER PRIMARY KEY, customer INTEGER NOT NULL REFERENCES "
       "customers(id), item TEXT, quantity INTEGER, price INTEGER);");

  exec("BEGIN");
  sqlite3_stmt *insert = prepare("INSERT INTO customers(name, city, score) VALUES (?1, ?2, ?3)");
  for (long i = 0; i < customers; i++) {
    char name[32] = "";
    for (int n = 2 + (int)lcg(3); n > 0; n--) strcat(name, syllables[lcg(10)]);
    sqlite3_bind_text(insert, 1, name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(insert, 2, cities[lcg(12)], -1, SQLITE_STATIC);
    sqlite3_bind_double(insert, 3, lcg(100000) / 64.0); /* exact in binary */
    if (sqlite3_step(insert) != SQLITE_DONE) fail("insert customer");
    sqlite3_reset(insert);
  }
  sqlite3_finalize(insert);
  insert = prepare("INSERT INTO orders(customer, item, quantity, price) VALUES (?1, ?2, ?3, ?4)");
  for (long i = 0; i < orders; i++) {
    char item[24];
    snprintf(item, sizeof item, "item-%u", lcg(500));
    sqlite3_bind_int64(insert, 1, 1 + lcg((unsigned)customers));
    sqlite3_bind_text(insert, 2, item, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(insert, 3, 1 + (int)lcg(10));
    sqlite3_bind_int(insert, 4, 100 + (int)lcg(99900));
    if (sqlite3_step(insert) != SQLITE_DONE) fail("insert order");
    sqlite3_reset(insert);
  }
  sqlite3_finalize(insert);
  exec("COMMIT");
  exec("CREATE INDEX orders_customer ON orders(customer);"
       "CREATE INDEX customers_city ON customers(city, name); ANALYZE;");

  query("join", "SELECT c.city, count(*), sum(o.quantity * o.price) FROM orders o "
                "JOIN customers c ON c.id = o.customer GROUP BY c.city ORDER BY c.city");
  query("group", "SELECT customer, count(*), sum(quantity), min(price), max(price), "
                 "avg(price) FROM orders GROUP BY customer HAVING count(*) > 3 ORDER BY customer");
  query("top", "SELECT id, customer, item, quantity * price AS total FROM orders "
               "ORDER BY total DESC, id LIMIT 25");
  query("like", "SELECT city, count(*), sum(score), max(name) FROM customers "
                "WHERE name LIKE '%ka%' GROUP BY city ORDER BY city");
  query("subquery", "SELECT count(*), total(score) FROM customers "
                    "WHERE id NOT IN (SELECT customer FROM orders WHERE quantity > 5)");
  query("items", "SELECT item, count(DISTINCT customer), sum(quantity) FROM orders "
                 "WHERE item BETWEEN 'item-1' AND 'item-3' GROUP BY item ORDER BY 3 DESC, 1 LIMIT 40");
  change("update", "UPDATE orders SET price = price + 7 WHERE quantity > 7 AND customer % 3 = 0");
  change("delete", "DELETE FROM orders WHERE price % 13 = 0");
  query("final", "SELECT count(*), sum(price), sum(quantity), max(id) FROM orders");
  query("city", "SELECT city, count(*) FROM customers INDEXED BY customers_city "
                "WHERE city >= 'F' GROUP BY city ORDER BY city");
  if (sqlite3_close(db) != SQLITE_OK) fail("close");
  return 0;
}
