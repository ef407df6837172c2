//! test-ATIS: joins, DISTINCT and GROUP BY over small airline-information tables. The
//! script loads a fixed data set (Data/ATIS) that is not shipped here; these tables are
//! generated with the same shapes and keys and sizes of the same order (hundreds of rows).

use super::exec::Runner;
use crate::db::{DbResult, Value};

/// (table, columns with types and keys, secondary indexes as (name, column)).
const TABLES: [(&str, &str, &[&str]); 10] = [
    ("state", "state_code char(2) NOT NULL, state_name varchar(25) NOT NULL, PRIMARY KEY (state_code)", &[]),
    ("city", "city_code varchar(4) NOT NULL, city_name varchar(25) NOT NULL, state_code varchar(2) NOT NULL, PRIMARY KEY (city_code, state_code)", &["state_code"]),
    ("aircraft", "aircraft_code char(3) NOT NULL, aircraft_type char(64) NOT NULL, category char(10) NOT NULL, PRIMARY KEY (aircraft_code)", &[]),
    ("airline", "airline_code char(2) NOT NULL, airline_name char(64) NOT NULL, PRIMARY KEY (airline_code)", &[]),
    ("flight", "flight_code int NOT NULL, airline_code char(2) NOT NULL, aircraft_code char(3) NOT NULL, from_airport char(3) NOT NULL, to_airport char(3) NOT NULL, PRIMARY KEY (flight_code)", &["airline_code", "aircraft_code"]),
    ("fare", "fare_code char(8) NOT NULL, restrict_code char(5) NOT NULL, one_way_cost int NOT NULL, PRIMARY KEY (fare_code)", &["restrict_code"]),
    ("restrict_carrier", "airline_code char(2) NOT NULL, restrict_code char(5) NOT NULL, PRIMARY KEY (restrict_code, airline_code)", &[]),
    ("flight_fare", "flight_code int NOT NULL, fare_code char(8) NOT NULL, PRIMARY KEY (flight_code, fare_code)", &["fare_code"]),
    ("month_name", "month_number int NOT NULL, month_name char(9) NOT NULL, PRIMARY KEY (month_number)", &[]),
    ("day_name", "day_code int NOT NULL, day_name char(9) NOT NULL, PRIMARY KEY (day_code)", &[]),
];

const FLIGHTS: u64 = 579;
const FARES: u64 = 534;
const AIRLINES: u64 = 40;
const AIRCRAFT: u64 = 22;
const AIRPORTS: u64 = 9;
const RESTRICTS: u64 = 150;

fn t(s: String) -> Value {
    Value::Text(s)
}
fn i(n: u64) -> Value {
    Value::Int(n as i64)
}

/// The generated rows of `table`.
fn rows(table: &str) -> Vec<Vec<Value>> {
    match table {
        "state" => (0..50)
            .map(|k| vec![t(code2(k)), t(format!("State {k}"))])
            .collect(),
        "city" => (0..400)
            .map(|k| {
                let c = if k == 0 {
                    "MATL".to_string()
                } else {
                    format!("C{k:03}")
                };
                vec![t(c), t(format!("City {k}")), t(code2(k % 50))]
            })
            .collect(),
        "aircraft" => (0..AIRCRAFT)
            .map(|k| {
                vec![
                    t(format!("A{k:02}")),
                    t(format!("Aircraft type {k}")),
                    t([
                        "JET",
                        "PROPELLER",
                        "TURBOPROP",
                        "HELICOPTR",
                        "WIDEBODY",
                        "REGIONAL",
                    ][(k % 6) as usize]
                        .to_string()),
                ]
            })
            .collect(),
        "airline" => (0..AIRLINES)
            .map(|k| vec![t(code2(k)), t(format!("Airline {k}"))])
            .collect(),
        "flight" => (0..FLIGHTS)
            .map(|k| {
                vec![
                    i(k + 100_000),
                    t(code2(k * 7 % AIRLINES)),
                    t(format!("A{:02}", k * 5 % AIRCRAFT)),
                    t(format!("P{:02}", k % AIRPORTS)),
                    t(format!("P{:02}", (k + 3) % AIRPORTS)),
                ]
            })
            .collect(),
        "fare" => (0..FARES)
            .map(|k| {
                vec![
                    t(format!("F{k:07}")),
                    t(format!("R{:04}", k * 13 % RESTRICTS)),
                    i(50 + k * 37 % 900),
                ]
            })
            .collect(),
        // Each restriction applies to several airlines (the join fans out, as the script's).
        "restrict_carrier" => (0..RESTRICTS)
            .flat_map(|k| {
                (0..4).map(move |m| vec![t(code2((k + m * 9) % AIRLINES)), t(format!("R{k:04}"))])
            })
            .collect(),
        "flight_fare" => (0..FLIGHTS)
            .flat_map(|k| {
                (0..2).map(move |m| {
                    vec![
                        i(k + 100_000),
                        t(format!("F{:07}", (k * 3 + m * 101) % FARES)),
                    ]
                })
            })
            .collect(),
        "month_name" => (1..=12)
            .map(|k| vec![i(k), t(format!("Month{k}"))])
            .collect(),
        _ => (1..=7).map(|k| vec![i(k), t(format!("Day{k}"))]).collect(),
    }
}

/// Two letters from a number (airline and state codes).
fn code2(k: u64) -> String {
    let a = (b'A' + (k / 26 % 26) as u8) as char;
    let b = (b'A' + (k % 26) as u8) as char;
    format!("{a}{b}")
}

fn columns(body: &str) -> Vec<&str> {
    let cols = body.split(", PRIMARY KEY").next().unwrap_or(body);
    cols.split(", ")
        .filter(|c| !c.starts_with("PRIMARY KEY"))
        .map(|c| c.split(' ').next().unwrap_or(c))
        .collect()
}

pub async fn atis(r: &mut Runner<'_>) -> DbResult<()> {
    let ops = [
        "select_simple_join",
        "select_join",
        "select_key_prefix_join",
        "select_distinct",
        "select_group",
    ];
    if !r.any(&ops) {
        return Ok(());
    }
    for (name, body, idx) in TABLES {
        r.drop_table(name).await?;
        let sql = r.create_sql(name, body);
        r.must(&sql).await?;
        for c in idx {
            r.must(&format!("CREATE INDEX {name}_{c} ON {name} ({c})"))
                .await?;
        }
        let cols = columns(body);
        r.load(name, &cols, rows(name).into_iter()).await?;
    }
    let names: Vec<&str> = TABLES.iter().map(|t| t.0).collect();
    crate::contract::after_load(&mut r.conn, &names)
        .await
        .map_err(|e| crate::db::DbError::new(crate::db::ErrorClass::Other, e.message))?;
    let simple_join = [
        "SELECT city.city_name, state.state_name, city.city_code FROM city, state WHERE city.city_code='MATL' AND city.state_code=state.state_code",
        "SELECT city.city_name, state.state_name, city.city_code FROM state, city WHERE city.state_code=state.state_code",
        "SELECT month_name.month_name, day_name.day_name FROM month_name, day_name WHERE month_name.month_number=day_name.day_code",
        "SELECT month_name.month_name, day_name.day_name FROM month_name, day_name WHERE month_name.month_number=day_name.day_code AND day_name.day_code >= 4",
        "SELECT flight.flight_code, aircraft.aircraft_type FROM flight, aircraft WHERE flight.aircraft_code=aircraft.aircraft_code",
    ];
    r.simple("select_simple_join", true, |j| {
        simple_join[(j % 5) as usize].to_string()
    })
    .await?;
    r.simple("select_join", true, |_| {
        "SELECT airline.airline_name, aircraft.aircraft_type FROM aircraft, airline, flight WHERE flight.aircraft_code=aircraft.aircraft_code AND flight.airline_code=airline.airline_code".into()
    })
    .await?;
    r.simple("select_key_prefix_join", true, |_| {
        "SELECT fare.fare_code FROM restrict_carrier, airline, fare WHERE restrict_carrier.airline_code=airline.airline_code AND fare.restrict_code=restrict_carrier.restrict_code".into()
    })
    .await?;
    let distinct = [
        "SELECT DISTINCT category FROM aircraft",
        "SELECT DISTINCT from_airport FROM flight",
        "SELECT DISTINCT aircraft_code FROM flight",
        "SELECT DISTINCT * FROM fare",
        "SELECT DISTINCT flight_code FROM flight_fare",
        "SELECT DISTINCT flight.flight_code, aircraft.aircraft_type FROM flight, aircraft WHERE flight.aircraft_code=aircraft.aircraft_code",
        "SELECT DISTINCT airline.airline_name, aircraft.aircraft_type FROM aircraft, airline, flight WHERE flight.aircraft_code=aircraft.aircraft_code AND flight.airline_code=airline.airline_code",
        "SELECT DISTINCT fare.restrict_code FROM fare, flight_fare WHERE fare.fare_code=flight_fare.fare_code",
    ];
    r.simple("select_distinct", true, |j| {
        distinct[(j % 8) as usize].to_string()
    })
    .await?;
    let group = [
        "SELECT airline_code, count(*) FROM flight GROUP BY airline_code",
        "SELECT aircraft_code, count(*) FROM flight GROUP BY aircraft_code",
        "SELECT from_airport, to_airport, count(*) FROM flight GROUP BY from_airport, to_airport",
        "SELECT restrict_code, min(one_way_cost), max(one_way_cost) FROM fare GROUP BY restrict_code",
        "SELECT state_code, count(*) FROM city GROUP BY state_code",
        "SELECT category, count(*) FROM aircraft GROUP BY category",
        "SELECT flight.airline_code, count(*) FROM flight, flight_fare WHERE flight.flight_code=flight_fare.flight_code GROUP BY flight.airline_code",
    ];
    r.simple("select_group", true, |j| {
        group[(j % 7) as usize].to_string()
    })
    .await?;
    for name in names {
        r.drop_table(name).await?;
    }
    Ok(())
}
