//! The connection pool: r2d2 over the synchronous client, with each connection's prepared
//! statements kept beside it, so a hot statement is parsed and planned once per connection
//! and then costs one round trip.

use std::collections::HashMap;

use postgres::{Client, GenericClient, NoTls, Statement};
use r2d2_postgres::PostgresConnectionManager;

/// One pooled connection and the statements prepared on it.
pub(crate) struct Conn {
    pub(crate) client: Client,
    pub(crate) statements: Statements,
}

/// Statements prepared on one connection, by their SQL text.
#[derive(Default)]
pub(crate) struct Statements(HashMap<String, Statement>);

impl Statements {
    /// The statement for `sql`, prepared through `client` (the connection or a transaction
    /// on it) the first time. Prepared statements outlive the transaction that prepared them.
    pub(crate) fn get(
        &mut self,
        client: &mut impl GenericClient,
        sql: &str,
    ) -> Result<Statement, postgres::Error> {
        if let Some(statement) = self.0.get(sql) {
            return Ok(statement.clone());
        }
        let statement = client.prepare(sql)?;
        self.0.insert(sql.to_owned(), statement.clone());
        Ok(statement)
    }
}

/// Opens connections for the pool and checks them.
pub(crate) struct Manager(pub(crate) PostgresConnectionManager<NoTls>);

impl r2d2::ManageConnection for Manager {
    type Connection = Conn;
    type Error = postgres::Error;

    fn connect(&self) -> Result<Conn, postgres::Error> {
        Ok(Conn { client: self.0.connect()?, statements: Statements::default() })
    }

    fn is_valid(&self, conn: &mut Conn) -> Result<(), postgres::Error> {
        self.0.is_valid(&mut conn.client)
    }

    fn has_broken(&self, conn: &mut Conn) -> bool {
        self.0.has_broken(&mut conn.client)
    }
}
